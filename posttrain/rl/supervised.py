"""The supervised loss of the warm start (SFT, rejection sampling): next-token negative
log-likelihood on the model's own tokens, with the same mask and aggregation as the RL losses."""

from __future__ import annotations

import torch

from posttrain.rl.aggregation import aggregate


def nll_loss(
    logprobs: torch.Tensor, mask: torch.Tensor, aggregation: str = "token_mean", normalizer: float | None = None
) -> tuple[torch.Tensor, dict[str, float]]:
    """loss = aggregate(-logprob_t, mask, aggregation, normalizer)

    logprob_t = log p(y_t | y_<t) of the demonstrated token; mask is 1 on the tokens the model
    would have produced (tool observations and prompts are 0)."""
    loss = aggregate(-logprobs, mask, aggregation, normalizer)
    tokens = float(mask.sum())
    mean_nll = float((-logprobs.detach() * mask).sum()) / max(tokens, 1.0)
    return loss, {"nll": mean_nll}
