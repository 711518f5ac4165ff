"""One optimizer step of preference training on a batch of (prompt, chosen, rejected) token ids.

The chosen and the rejected sequences of the batch go through the policy in one right-padded
forward (rows 0..B-1 chosen, B..2B-1 rejected); each response's log-probability is the sum over
its own tokens (prompt tokens masked). DPO's reference log-probabilities come from a frozen copy
of the starting model in a forward without grad, per batch."""

from __future__ import annotations

import copy
import time
from pathlib import Path

import torch

from posttrain.config import PreferenceConfig
from posttrain.rl.preference import dpo_loss, simpo_loss
from posttrain.train.logprobs import pad_right, token_logprobs


class PreferenceTrainer:
    def __init__(self, model: torch.nn.Module, settings: PreferenceConfig, pad_id: int = 0) -> None:
        self.model, self.settings, self.pad_id = model, settings, pad_id
        self.reference = None
        if settings.loss == "dpo":  # the starting weights, frozen
            self.reference = copy.deepcopy(model).eval().requires_grad_(False)
        self.model.config.use_cache = False
        self.model.train()
        self.optimizer = torch.optim.AdamW(
            [p for p in model.parameters() if p.requires_grad], lr=settings.lr, weight_decay=settings.weight_decay
        )
        self.lr_schedule = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, lambda step: min(1.0, (step + 1) / (settings.warmup_steps + 1))
        )

    def state_dict(self) -> dict:
        return {"optimizer": self.optimizer.state_dict(), "scheduler": self.lr_schedule.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        self.optimizer.load_state_dict(state["optimizer"])
        self.lr_schedule.load_state_dict(state["scheduler"])

    def write_files(self, directory: Path) -> None:
        self.model.save_pretrained(directory, safe_serialization=True)

    def step(self, prompts: list[list[int]], chosen: list[list[int]], rejected: list[list[int]]) -> dict[str, float]:
        """One update on B pairs; returns the loss, its stats, grad_norm, lr, tokens and time."""
        started = time.perf_counter()
        settings = self.settings
        batch = _Batch(prompts, chosen, rejected, settings.max_length, self.pad_id)
        logps, lengths = batch.response_logprobs(self.model)
        if self.reference is not None:
            with torch.no_grad():
                ref_logps, _ = batch.response_logprobs(self.reference)
            loss, stats = dpo_loss(*logps.chunk(2), *ref_logps.chunk(2), beta=settings.beta)
        else:
            loss, stats = simpo_loss(*logps.chunk(2), *lengths.chunk(2), beta=settings.beta, gamma=settings.gamma)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), settings.grad_clip)
        lr = self.lr_schedule.get_last_lr()[0]
        self.optimizer.step()
        self.lr_schedule.step()
        chosen_logps, rejected_logps = logps.detach().chunk(2)
        return {
            "loss": loss.item(),
            **stats,
            "chosen_logp": chosen_logps.mean().item(),
            "rejected_logp": rejected_logps.mean().item(),
            "grad_norm": float(grad_norm),
            "lr": lr,
            "train_tokens": int(lengths.sum()),
            "train_time_s": time.perf_counter() - started,
        }


class _Batch:
    """The 2B sequences prompt + response, cut to max_length tokens (the start kept), padded."""

    def __init__(self, prompts, chosen, rejected, max_length: int, pad_id: int) -> None:
        prompts = prompts + prompts
        sequences = [(p + r)[:max_length] for p, r in zip(prompts, chosen + rejected, strict=True)]
        self.ids, self.attention = pad_right(sequences, pad_id)
        self.response = torch.zeros_like(self.ids)
        for row, (prompt, sequence) in enumerate(zip(prompts, sequences, strict=True)):
            self.response[row, len(prompt) : len(sequence)] = 1
        # logits are needed only from the position before the first response token
        self.first_position = max(0, min(len(p) for p in prompts) - 1)

    def response_logprobs(self, model) -> tuple[torch.Tensor, torch.Tensor]:
        """Per sequence: the sum of its response tokens' log-probabilities, and their count."""
        mask = self.response[:, 1:]
        if not _plain_lm_head(model):
            logprobs, _ = token_logprobs(model, self.ids, self.attention, first_position=self.first_position)
            return (logprobs * mask).sum(dim=1), mask.sum(dim=1)
        # only the positions that predict a response token go through the LM head: the prompts'
        # and the padding's logits over the whole vocabulary would be most of the work
        hidden = model.base_model(input_ids=self.ids, attention_mask=self.attention, use_cache=False)
        where = mask.bool()
        logits = model.get_output_embeddings()(hidden.last_hidden_state[:, :-1][where]).float()
        targets = self.ids[:, 1:][where]
        token = logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1) - torch.logsumexp(logits, dim=-1)
        rows = where.nonzero()[:, 0]
        sums = torch.zeros(self.ids.shape[0], dtype=token.dtype).index_add(0, rows, token)
        return sums, mask.sum(dim=1)


def _plain_lm_head(model) -> bool:
    """True when the model's logits are its LM head applied to the backbone's last hidden state,
    nothing scaled or capped on the way (Llama, Qwen, Mistral, SmolLM2, ...)."""
    config = model.config
    scaled = any(getattr(config, key, None) not in (None, 1.0) for key in ("final_logit_softcapping", "logit_scale"))
    return not scaled and model.get_output_embeddings() is not None and hasattr(model, "base_model")
