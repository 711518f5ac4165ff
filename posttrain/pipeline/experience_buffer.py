"""Finished rollout groups waiting for the trainer, under a bound on their staleness.

A group's version is the oldest policy version among its tokens (its head: the version that
began it; with partial rollouts later tokens may come from newer policies). When the trainer
is about to update policy version v, a group of version h has gap v - h. The buffer hands out
only groups with gap <= max_staleness (AReaL's eta, `max_head_offpolicyness`); older ones are
taken out and returned as stale, for the controller to regenerate. eta = 0 is on-policy
training: the synchronous loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


def group_head_version(group: Any) -> int:
    """The oldest policy version that produced any token of the group (completions of an
    answer group, turns of an episode group)."""
    versions: list[int] = []
    for completion in getattr(group, "completions", None) or []:
        versions.extend(completion.token_versions or [completion.version])
    for trajectory in getattr(group, "trajectories", None) or []:
        for turn in trajectory.turns:
            versions.extend(turn.token_versions)
    return min(versions) if versions else 0


def group_versions(group: Any) -> set[int]:
    versions: set[int] = set()
    for completion in getattr(group, "completions", None) or []:
        versions.update(completion.token_versions or [completion.version])
    for trajectory in getattr(group, "trajectories", None) or []:
        for turn in trajectory.turns:
            versions.update(turn.token_versions)
    return versions


def version_gap(trainer_version: int, head_version: int) -> int:
    return trainer_version - head_version


@dataclass
class BufferedGroup:
    key: str  # the stream slot, "step:slot"
    order: tuple[int, int]  # (step, slot): older first
    group: Any
    head_version: int


class StalenessBuffer:
    def __init__(self, max_staleness: int) -> None:
        if max_staleness < 0:
            raise ValueError(f"max_staleness must be >= 0, got {max_staleness}")
        self.max_staleness = max_staleness
        self._entries: dict[str, BufferedGroup] = {}

    def put(self, key: str, order: tuple[int, int], group: Any) -> None:
        if key in self._entries:
            raise ValueError(f"stream slot {key} is already buffered")
        self._entries[key] = BufferedGroup(key, order, group, group_head_version(group))

    def take(self, n: int, trainer_version: int) -> tuple[list[BufferedGroup], list[BufferedGroup]]:
        """(batch, stale). The batch is the n oldest fresh groups, or empty while fewer than n
        are fresh; stale groups are removed whether or not a batch is ready."""
        stale = [e for e in self._entries.values() if version_gap(trainer_version, e.head_version) > self.max_staleness]
        for entry in stale:
            del self._entries[entry.key]
        fresh = sorted(self._entries.values(), key=lambda e: e.order)
        if len(fresh) < n:
            return [], stale
        batch = fresh[:n]
        for entry in batch:
            del self._entries[entry.key]
        return batch, stale

    def keys(self) -> set[str]:
        return set(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def state(self) -> list[BufferedGroup]:
        return sorted(self._entries.values(), key=lambda e: e.order)

    def restore(self, entries: list[BufferedGroup]) -> None:
        self._entries = {e.key: e for e in entries}
