"""Per-token logprobs of given token ids under a model: what the trainer recomputes and
compares with the engine's."""

from __future__ import annotations

from contextlib import nullcontext

import torch

from posttrain.train.shared_prefix import prefix_cache


def pad_right(
    sequences: list[list[int]], pad_id: int, device: torch.device | str = "cpu"
) -> tuple[torch.Tensor, torch.Tensor]:
    """Token ids padded on the right with `pad_id`, and the attention mask; built as lists and
    made tensors on `device` at once (one copy to a GPU, not one per row)."""
    width = max(len(s) for s in sequences)
    ids = [list(seq) + [pad_id] * (width - len(seq)) for seq in sequences]
    mask = [[1] * len(seq) + [0] * (width - len(seq)) for seq in sequences]
    return torch.tensor(ids, dtype=torch.long, device=device), torch.tensor(mask, dtype=torch.long, device=device)


def token_logprobs(
    model: torch.nn.Module,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    temperature: float = 1.0,
    bf16_autocast: bool = False,
    with_entropy: bool = False,
    first_position: int = 0,
    prefix_length: int = 0,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """logprobs[:, t] = log p(input_ids[:, t+1] | input_ids[:, :t+1]) under
    softmax(logits / temperature); shape [B, T-1]. Right padding keeps positions 0..len-1,
    the same positions the engine used.

    Only positions >= `first_position` are computed (the rest are 0): the vocabulary
    projection and softmax over 49k logits are a large share of a small model's cost, and a
    trainer needs them only where completion tokens are predicted, not over the prompt.

    With `prefix_length` P > 0 (P <= first_position; every row's first P tokens are the same)
    those tokens run once, batch 1, and the rows' remaining tokens attend to their keys and
    values (shared_prefix.py): the same logprobs, to the bit."""
    width = input_ids.shape[1]
    keep = width - first_position  # logits for positions first_position .. width-1
    # on the model's device: the CPU's autocast on the CPU, CUDA's on a GPU
    autocast = torch.autocast(input_ids.device.type, dtype=torch.bfloat16) if bf16_autocast else nullcontext()
    with autocast:
        if prefix_length:
            cache = prefix_cache(model, input_ids[0, :prefix_length], input_ids.shape[0])
            logits = model(
                input_ids=input_ids[:, prefix_length:],
                attention_mask=attention_mask,
                cache=cache,
                use_cache=True,
                logits_to_keep=keep,
            ).logits
        else:
            logits = model(
                input_ids=input_ids, attention_mask=attention_mask, use_cache=False, logits_to_keep=keep
            ).logits
    logits = logits[:, :-1].float()
    if temperature != 1.0:
        logits = logits / temperature
    log_probs = torch.log_softmax(logits, dim=-1)
    chosen = log_probs.gather(-1, input_ids[:, first_position + 1 :].unsqueeze(-1)).squeeze(-1)
    entropy = None
    if with_entropy:
        with torch.no_grad():
            entropy = -(log_probs.exp() * log_probs).sum(-1)
    if first_position:
        pad = chosen.new_zeros((chosen.shape[0], first_position))
        chosen = torch.cat([pad, chosen], dim=1)
        entropy = torch.cat([pad, entropy], dim=1) if entropy is not None else None
    return chosen, entropy
