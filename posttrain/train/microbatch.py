"""Split a batch of sequences into micro-batches under a token budget."""

from __future__ import annotations


def token_budget_microbatches(lengths: list[int], max_tokens: int, shared: int = 0) -> list[list[int]]:
    """Group sequence indices so each micro-batch's size stays within `max_tokens`: its padded
    size (longest × count), or, when all its sequences start with the same `shared` tokens that
    run once, shared + (longest - shared) × count. Sequences are sorted by length first, so
    padding waste stays small. A single sequence longer than the budget gets a micro-batch of
    its own."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i], reverse=True)
    batches: list[list[int]] = []
    current: list[int] = []
    longest = 0
    for index in order:
        candidate_longest = max(longest, lengths[index])
        if current and shared + (candidate_longest - shared) * (len(current) + 1) > max_tokens:
            batches.append(current)
            current, candidate_longest = [], lengths[index]
        current.append(index)
        longest = candidate_longest
    if current:
        batches.append(current)
    return batches


def shared_prompt_microbatches(prompts: list[list[int]], lengths: list[int], max_tokens: int) -> list[list[int]]:
    """Micro-batches whose sequences share their prompt (a rollout group), so the prompt can run
    once per micro-batch: each group is split under the budget counting its prompt once.
    Sequences whose prompt no other has are batched together as usual."""
    groups: dict[tuple[int, ...], list[int]] = {}
    for index, prompt in enumerate(prompts):
        groups.setdefault(tuple(prompt), []).append(index)
    batches: list[list[int]] = []
    alone: list[int] = []
    for prompt, members in groups.items():
        if len(members) == 1:
            alone += members
            continue
        split = token_budget_microbatches([lengths[i] for i in members], max_tokens, shared=len(prompt))
        batches += [[members[j] for j in batch] for batch in split]
    if alone:
        batches += [
            [alone[j] for j in batch] for batch in token_budget_microbatches([lengths[i] for i in alone], max_tokens)
        ]
    return batches
