"""Entropy of the policy's next-token distribution."""

import torch


def entropy_from_logits(logits: torch.Tensor) -> torch.Tensor:
    """logits [..., T, V] -> entropy [..., T] of softmax(logits):

    H = -sum_v p_v log p_v,   log p = logits - logsumexp(logits)
    """
    # half-precision log-probs over a large vocab lose too much to sum accurately
    if logits.dtype in (torch.float16, torch.bfloat16):
        logits = logits.float()
    logp = torch.log_softmax(logits, dim=-1)
    # -inf logits (masked vocab) have p = 0 and must contribute 0, not 0 * -inf = nan;
    # zeroing logp (not the product) keeps the backward pass nan-free too
    safe_logp = logp.masked_fill(torch.isneginf(logp), 0.0)
    return -(logp.exp() * safe_logp).sum(dim=-1)
