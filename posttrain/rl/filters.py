"""Group filters for dynamic sampling."""

import torch


def informative_groups(rewards: torch.Tensor, atol: float = 1e-8, valid: torch.Tensor | None = None) -> torch.Tensor:
    """rewards [G, n] -> bool [G]: True where the group's rewards are not all equal,

        max_i r_i - min_i r_i > atol,

    over the samples `valid` [G, n] marks (all by default; a group with none is not informative).
    A group with equal rewards has zero advantage under any group baseline and gives
    no gradient; DAPO's dynamic sampling drops it.
    """
    if rewards.dim() != 2:
        raise ValueError(f"rewards must be [G, n], got shape {tuple(rewards.shape)}")
    if valid is None:
        return (rewards.amax(dim=1) - rewards.amin(dim=1)) > atol
    highest = rewards.masked_fill(~valid, float("-inf")).amax(dim=1)
    lowest = rewards.masked_fill(~valid, float("inf")).amin(dim=1)
    return (highest - lowest) > atol
