"""Per-token logprobs of given token ids under a model: what the trainer recomputes and
compares with the engine's."""

from __future__ import annotations

from contextlib import nullcontext

import torch
from torch.utils.checkpoint import checkpoint

from posttrain.train.shared_prefix import cache_argument, prefix_cache


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
    chunk_tokens: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """logprobs[:, t] = log p(input_ids[:, t+1] | input_ids[:, :t+1]) under
    softmax(logits / temperature); shape [B, T-1]. Right padding keeps positions 0..len-1,
    the same positions the engine used.

    Only positions >= `first_position` are computed (the rest are 0): the vocabulary
    projection and softmax over 49k logits are a large share of a small model's cost, and a
    trainer needs them only where completion tokens are predicted, not over the prompt.

    With `prefix_length` P > 0 (P <= first_position; every row's first P tokens are the same)
    those tokens run once, batch 1, and the rows' remaining tokens attend to their keys and
    values (shared_prefix.py): the same logprobs, to the bit.

    With `chunk_tokens` N > 0 (and a model whose logits are its LM head on the last hidden
    state, `projects_hidden_states`) the model body runs once and the LM head and softmax run
    over chunks of about N tokens (N // B positions of every row), each chunk recomputed in the
    backward pass instead of kept: a [B, T, vocab] logits tensor never exists, only
    [B, N // B, vocab]. The logprobs are the same bits where the linear kernel's rows do not
    depend on the call's row count (the engine's oneDNN kernel, onednn_linear.py); the
    gradients the same to float tolerance (the LM head's weight gradient is summed per chunk)."""
    width = input_ids.shape[1]
    keep = width - first_position  # positions first_position .. width-1
    chunked = bool(chunk_tokens) and projects_hidden_states(model)
    run = model.get_decoder() if chunked else model
    # on the model's device: the CPU's autocast on the CPU, CUDA's on a GPU
    autocast = torch.autocast(input_ids.device.type, dtype=torch.bfloat16) if bf16_autocast else nullcontext()
    head = {} if chunked else {"logits_to_keep": keep}
    with autocast:
        if prefix_length:
            cache = prefix_cache(model, input_ids[0, :prefix_length], input_ids.shape[0])
            out = run(
                input_ids=input_ids[:, prefix_length:],
                attention_mask=attention_mask,
                **{cache_argument(run): cache},
                use_cache=True,
                **head,
            )
        else:
            out = run(input_ids=input_ids, attention_mask=attention_mask, use_cache=False, **head)
    targets = input_ids[:, first_position + 1 :]
    if chunked:
        # the last position predicts no token: its logits are never computed
        hidden = out.last_hidden_state[:, -keep:-1]
        chosen, entropy = _chunked_head(model, hidden, targets, temperature, bf16_autocast, with_entropy, chunk_tokens)
    else:
        chosen, entropy = _head_logprobs(out.logits[:, :-1], targets, temperature, with_entropy)
    if first_position:
        pad = chosen.new_zeros((chosen.shape[0], first_position))
        chosen = torch.cat([pad, chosen], dim=1)
        entropy = torch.cat([pad, entropy], dim=1) if entropy is not None else None
    return chosen, entropy


def projects_hidden_states(model: torch.nn.Module) -> bool:
    """True when the model's logits are its LM head applied to its decoder's last hidden state,
    nothing scaled or capped on the way (Llama, Qwen, Mistral, SmolLM2, ...): what chunking the
    head needs."""
    config = model.config
    scaled = any(getattr(config, key, None) not in (None, 1.0) for key in ("final_logit_softcapping", "logit_scale"))
    return not scaled and model.get_output_embeddings() is not None and hasattr(model, "get_decoder")


def _head_logprobs(
    logits: torch.Tensor, targets: torch.Tensor, temperature: float, with_entropy: bool
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The chosen tokens' logprobs (and the entropies) from logits [B, T, V] and targets [B, T]."""
    logits = logits.float()
    if temperature != 1.0:
        logits = logits / temperature
    log_probs = torch.log_softmax(logits, dim=-1)
    chosen = log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    entropy = None
    if with_entropy:
        with torch.no_grad():
            entropy = -(log_probs.exp() * log_probs).sum(-1)
    return chosen, entropy


def _chunked_head(model, hidden, targets, temperature, bf16_autocast, with_entropy, chunk_tokens):
    """`_head_logprobs` of model's LM head over `hidden` [B, T, H], a chunk of positions at a
    time; with gradients, each chunk is checkpointed (its logits are recomputed in backward)."""
    head = model.get_output_embeddings()
    device = hidden.device.type

    def project(h: torch.Tensor, t: torch.Tensor):
        with torch.autocast(device, dtype=torch.bfloat16) if bf16_autocast else nullcontext():
            logits = head(h)
        return _head_logprobs(logits, t, temperature, with_entropy)

    step = max(1, chunk_tokens // max(1, hidden.shape[0]))
    chosen, entropy = [], []
    for start in range(0, max(1, hidden.shape[1]), step):
        h, t = hidden[:, start : start + step], targets[:, start : start + step]
        if torch.is_grad_enabled() and (h.requires_grad or any(p.requires_grad for p in head.parameters())):
            c, e = checkpoint(project, h, t, use_reentrant=False)
        else:
            c, e = project(h, t)
        chosen.append(c)
        entropy.append(e)
    return torch.cat(chosen, dim=1), torch.cat(entropy, dim=1) if with_entropy else None
