"""Per-token estimators of KL(pi || pi_ref) from sampled-token log-probs (Schulman, 2020)."""

import torch


def kl_k1(logprobs: torch.Tensor, ref_logprobs: torch.Tensor) -> torch.Tensor:
    """k1 = log pi - log pi_ref. Unbiased, but can be negative per token."""
    return logprobs - ref_logprobs


def kl_k3(logprobs: torch.Tensor, ref_logprobs: torch.Tensor) -> torch.Tensor:
    """k3 = exp(d) - d - 1 with d = log pi_ref - log pi.

    Unbiased for samples from pi and >= 0 everywhere (e^d >= 1 + d).
    """
    d = ref_logprobs - logprobs
    return torch.exp(d) - d - 1


def kl_penalty(logprobs: torch.Tensor, ref_logprobs: torch.Tensor, estimator: str) -> torch.Tensor:
    """Per-token KL estimate by name: "k1" or "k3"."""
    if estimator == "k1":
        return kl_k1(logprobs, ref_logprobs)
    if estimator == "k3":
        return kl_k3(logprobs, ref_logprobs)
    raise ValueError(f"unknown KL estimator {estimator!r}; expected 'k1' or 'k3'")
