"""Split a batch of sequences into micro-batches under a token budget."""

from __future__ import annotations


def token_budget_microbatches(lengths: list[int], max_tokens: int) -> list[list[int]]:
    """Group sequence indices so each micro-batch's padded size (longest × count) stays within
    `max_tokens`. Sequences are sorted by length first, so padding waste stays small. A single
    sequence longer than the budget gets a micro-batch of its own."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i], reverse=True)
    batches: list[list[int]] = []
    current: list[int] = []
    longest = 0
    for index in order:
        candidate_longest = max(longest, lengths[index])
        if current and candidate_longest * (len(current) + 1) > max_tokens:
            batches.append(current)
            current, candidate_longest = [], lengths[index]
        current.append(index)
        longest = candidate_longest
    if current:
        batches.append(current)
    return batches
