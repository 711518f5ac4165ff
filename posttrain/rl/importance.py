"""Truncated importance sampling (TIS) for rollout-engine / trainer mismatch."""

import torch


def truncated_importance_weights(
    trainer_logprobs: torch.Tensor, engine_logprobs: torch.Tensor, cap: float = 2.0
) -> torch.Tensor:
    """TIS (Yao et al., 2025), per token:

        w_t = min( pi_trainer(y_t) / pi_engine(y_t), cap ) = min( exp(lp_trainer - lp_engine), cap )

    The rollout engine (vLLM etc.) samples from a slightly different distribution
    than the trainer computes; w reweights the loss towards the trainer's. The cap
    bounds the variance. Returned detached: w is a constant weight, not a path for
    gradients.
    """
    if cap <= 0:
        raise ValueError(f"cap must be > 0, got {cap}")
    log_ratio = trainer_logprobs.detach() - engine_logprobs.detach()
    return torch.exp(log_ratio).clamp(max=cap)
