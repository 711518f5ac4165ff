"""Sequence-level advantages from grouped rewards.

`rewards` is a float tensor [G, n]: G groups, each holding n samples of the same
prompt. Every function returns [G, n] advantages, one scalar per completion, which
the policy losses broadcast over that completion's tokens.
"""

import torch


def _check_grouped(rewards: torch.Tensor) -> None:
    if rewards.dim() != 2:
        raise ValueError(f"rewards must be [G, n], got shape {tuple(rewards.shape)}")


def grpo_advantages(rewards: torch.Tensor, normalize_std: bool = True, eps: float = 1e-6) -> torch.Tensor:
    """GRPO (DeepSeekMath), per group:

        A_i = (r_i - mean(r)) / (std(r) + eps)

    std is the unbiased sample std (torch.std default, divides by n - 1), the same
    as DeepSeekMath / TRL. With normalize_std=False this is Dr. GRPO:

        A_i = r_i - mean(r)

    A group whose rewards are all equal gets A = 0 either way.
    """
    _check_grouped(rewards)
    centered = rewards - rewards.mean(dim=1, keepdim=True)
    if not normalize_std:
        return centered
    if rewards.shape[1] < 2:
        raise ValueError("grpo_advantages with normalize_std needs n >= 2 samples per group")
    return centered / (rewards.std(dim=1, keepdim=True) + eps)


def rloo_advantages(rewards: torch.Tensor) -> torch.Tensor:
    """RLOO (REINFORCE leave-one-out), per group:

    A_i = r_i - (1 / (n - 1)) * sum_{j != i} r_j  =  n / (n - 1) * (r_i - mean(r))
    """
    _check_grouped(rewards)
    n = rewards.shape[1]
    if n < 2:
        raise ValueError(f"rloo_advantages needs n >= 2 samples per group, got n={n}")
    leave_one_out_mean = (rewards.sum(dim=1, keepdim=True) - rewards) / (n - 1)
    return rewards - leave_one_out_mean


def reinforce_pp_advantages(rewards: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """REINFORCE++-baseline (OpenRLHF): group-mean baseline, then batch-wide scale.

        c_i = r_i - mean(r of i's group)
        A_i = c_i / (std(c over all G*n values) + eps)

    The std is taken over the group-centred values c (as OpenRLHF / verl whiten the
    advantages after subtracting the baseline), unbiased like grpo_advantages. c has
    batch mean 0, so this is also whitening. Normalising by the batch rather than the
    group std avoids GRPO's up-weighting of near-uniform groups.
    """
    _check_grouped(rewards)
    if rewards.numel() < 2:
        raise ValueError("reinforce_pp_advantages needs at least 2 rewards in the batch")
    centered = rewards - rewards.mean(dim=1, keepdim=True)
    return centered / (centered.std() + eps)


def masked_group_advantages(rewards: torch.Tensor, valid: torch.Tensor, group_advantages) -> torch.Tensor:
    """Advantages as if the invalid samples had never been drawn (episodes that measured the
    infrastructure, not the policy): each group's from its valid samples alone,

        A[g, valid_g] = group_advantages(r[g, valid_g]),    A[g, ~valid_g] = 0

    `group_advantages` maps [1, k] rewards to [1, k] advantages (grpo_advantages,
    rloo_advantages); a group needs as many valid samples as it does.
    """
    _check_grouped(rewards)
    advantages = torch.zeros_like(rewards)
    for g in range(rewards.shape[0]):
        kept = valid[g].nonzero().squeeze(1)
        if kept.numel():
            advantages[g, kept] = group_advantages(rewards[g, kept].unsqueeze(0))[0]
    return advantages


def masked_reinforce_pp_advantages(rewards: torch.Tensor, valid: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """reinforce_pp_advantages over the valid samples alone (groups of unequal size):

    c_i = r_i - mean(r_j : j valid, in i's group)
    A_i = c_i / (std(c over every valid sample) + eps),    A = 0 where invalid
    """
    _check_grouped(rewards)
    advantages = torch.zeros_like(rewards)
    rows = [g for g in range(rewards.shape[0]) if valid[g].any()]
    centered = {g: rewards[g, valid[g]] - rewards[g, valid[g]].mean() for g in rows}
    if not rows:
        return advantages
    scale = torch.cat(list(centered.values())).std() + eps
    for g in rows:
        advantages[g, valid[g]] = centered[g] / scale
    return advantages
