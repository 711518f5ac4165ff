"""Which samples of a step each trainer rank takes: a pure function of the batch, so every rank
computes every rank's share by itself (no communication) and knows how many micro-batches the
busiest rank will run."""

from __future__ import annotations


def rank_shares(lengths: list[int], world_size: int) -> list[list[int]]:
    """Split sample indices over `world_size` ranks so their token counts are balanced: longest
    first, each to the rank with the fewest tokens so far (the lowest rank on a tie). Within a
    share the indices keep the batch's order. A rank may get nothing when there are fewer
    samples than ranks."""
    if world_size < 1:
        raise ValueError(f"world_size must be >= 1, got {world_size}")
    loads = [0] * world_size
    shares: list[list[int]] = [[] for _ in range(world_size)]
    for index in sorted(range(len(lengths)), key=lambda i: (-lengths[i], i)):
        rank = min(range(world_size), key=lambda r: (loads[r], r))
        shares[rank].append(index)
        loads[rank] += lengths[index]
    return [sorted(share) for share in shares]
