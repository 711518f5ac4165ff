"""Reduce a per-token quantity [B, T] to the scalar loss.

For gradient accumulation, pass the *global* count as `normalizer` (tokens for
token_mean, sequences for seq_mean, a constant for token_sum_norm): then each
micro-batch's loss is its exact share of the full-batch loss, and summing the
micro-batch gradients gives the full-batch gradient.
"""

import torch

AGGREGATION_MODES = ("token_mean", "seq_mean", "token_sum_norm")


def aggregate(values: torch.Tensor, mask: torch.Tensor, mode: str, normalizer: float | None = None) -> torch.Tensor:
    """values, mask: [B, T]; mask is 1 on the completion tokens that count.

    token_mean:      sum_{b,t} v*m / (normalizer or sum_{b,t} m)
    seq_mean:        sum_b [ sum_t v*m / sum_t m ] / (normalizer or #{b : sum_t m > 0})
    token_sum_norm:  sum_{b,t} v*m / normalizer       (Dr. GRPO; normalizer required,
                                                       e.g. max_tokens * n_seqs)
    """
    if mode not in AGGREGATION_MODES:
        raise ValueError(f"unknown aggregation mode {mode!r}; expected one of {AGGREGATION_MODES}")
    if normalizer is not None and normalizer <= 0:
        raise ValueError(f"normalizer must be > 0, got {normalizer}")
    mask = mask.to(values.dtype)
    masked = values * mask

    if mode == "token_mean":
        # clamp: an all-padding micro-batch contributes 0 instead of 0/0 = nan
        denom = mask.sum().clamp(min=1) if normalizer is None else normalizer
        return masked.sum() / denom

    if mode == "seq_mean":
        lengths = mask.sum(dim=-1)
        per_seq = masked.sum(dim=-1) / lengths.clamp(min=1)
        denom = (lengths > 0).sum().clamp(min=1) if normalizer is None else normalizer
        return per_seq.sum() / denom

    if normalizer is None:
        raise ValueError("token_sum_norm needs a constant normalizer (e.g. max_tokens * n_seqs)")
    return masked.sum() / normalizer
