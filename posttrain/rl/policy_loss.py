"""Clipped policy-gradient losses.

Shapes: logprobs, old_logprobs, mask [B, T]; advantages [B] (one per sequence,
broadcast over its tokens) or [B, T]. Both losses return (scalar loss, stats) with
stats over the masked tokens: clip_fraction (share of tokens whose gradient the
clip cut), ratio_mean, ratio_max.
"""

import torch

from posttrain.rl.aggregation import aggregate


def _per_token(advantages: torch.Tensor) -> torch.Tensor:
    return advantages.unsqueeze(-1) if advantages.dim() == 1 else advantages


def _masked_log_ratio(logprobs: torch.Tensor, old_logprobs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    # padding positions may hold arbitrary log-probs (even -inf); pinning their log-ratio
    # to 0 keeps exp() finite so masking later cannot turn inf * 0 into nan
    return torch.where(mask.bool(), logprobs - old_logprobs, torch.zeros_like(logprobs))


@torch.no_grad()
def _stats(ratio: torch.Tensor, clipped: torch.Tensor, mask: torch.Tensor) -> dict[str, float]:
    m = mask.bool()
    n = int(m.sum())
    if n == 0:
        return {"clip_fraction": 0.0, "ratio_mean": 0.0, "ratio_max": 0.0}
    return {
        "clip_fraction": (clipped & m).sum().item() / n,
        "ratio_mean": ratio[m].mean().item(),
        "ratio_max": ratio[m].max().item(),
    }


def _clipped_objective(
    ratio: torch.Tensor, advantages: torch.Tensor, clip_low: float, clip_high: float
) -> tuple[torch.Tensor, torch.Tensor]:
    unclipped = ratio * advantages
    clipped = ratio.clamp(1 - clip_low, 1 + clip_high) * advantages
    # strictly smaller <=> the clamp is active and min() picked it: that token's gradient is 0
    return -torch.minimum(unclipped, clipped), clipped < unclipped


def ppo_clip_loss(
    logprobs: torch.Tensor,
    old_logprobs: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    clip_low: float = 0.2,
    clip_high: float = 0.2,
    aggregation: str = "token_mean",
    normalizer: float | None = None,
    token_weights: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, float]]:
    """PPO / GRPO token-level clipped surrogate:

        r_t    = exp(logprob_t - old_logprob_t)
        loss_t = -min( r_t * A_t, clip(r_t, 1 - clip_low, 1 + clip_high) * A_t ) * w_t
        loss   = aggregate(loss_t, mask, aggregation, normalizer)

    clip_high > clip_low is DAPO's clip-higher: low-probability tokens with A > 0 may
    grow further before clipping. w_t = token_weights (e.g. truncated importance
    weights), treated as constants; 1 when not given.
    """
    ratio = torch.exp(_masked_log_ratio(logprobs, old_logprobs, mask))
    loss_t, clipped = _clipped_objective(ratio, _per_token(advantages), clip_low, clip_high)
    if token_weights is not None:
        loss_t = loss_t * token_weights.detach()
    loss = aggregate(loss_t, mask, aggregation, normalizer)
    return loss, _stats(ratio, clipped, mask)


def gspo_loss(
    logprobs: torch.Tensor,
    old_logprobs: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    clip_low: float = 3e-4,
    clip_high: float = 4e-4,
    normalizer: float | None = None,
    token_weights: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, float]]:
    """GSPO (Qwen, 2025), sequence-level importance ratio:

        s_i     = exp( (1/|y_i|) * sum_t (logprob_{i,t} - old_logprob_{i,t}) )
        s_{i,t} = sg[s_i] * exp(logprob_{i,t} - sg[logprob_{i,t}])        (GSPO-token form)
        loss_i  = (1/|y_i|) * sum_t -min( s_{i,t} * A_i, clip(s_{i,t}, 1 - clip_low, 1 + clip_high) * A_i ) * w_{i,t}
        loss    = sum_i loss_i / (normalizer or number of non-empty sequences)

    s_{i,t} equals s_i in value, and d s_{i,t} / d logprob_{i,t} = s_i, so with
    sequence-level A_i (and no token weights) the gradient is exactly that of the
    sequence objective -min(s_i A_i, clip(s_i) A_i): each token receives s_i A_i / |y_i|.
    The clip range is tiny because s_i is a per-token geometric mean.
    """
    log_ratio = _masked_log_ratio(logprobs, old_logprobs, mask)
    lengths = mask.to(log_ratio.dtype).sum(dim=-1, keepdim=True).clamp(min=1)
    seq_log_ratio = log_ratio.sum(dim=-1, keepdim=True) / lengths
    # value 0, gradient 1 per token; where() again so padding cannot inject -inf - -inf
    grad_path = torch.where(mask.bool(), logprobs - logprobs.detach(), torch.zeros_like(logprobs))
    ratio = torch.exp(seq_log_ratio.detach() + grad_path)
    loss_t, clipped = _clipped_objective(ratio, _per_token(advantages), clip_low, clip_high)
    if token_weights is not None:
        loss_t = loss_t * token_weights.detach()
    loss = aggregate(loss_t, mask, "seq_mean", normalizer)
    return loss, _stats(ratio, clipped, mask)
