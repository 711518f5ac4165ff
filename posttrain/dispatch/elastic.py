"""The elastic pool size: the number of workers follows the work, between a minimum and a maximum.

Each dispatcher turn asks `target(...)`: under a burst the pool grows at once to cover every job
that is ready or running (up to `max_workers`); the workers idle for `idle_timeout_s` are let go, down to
what the work needs and never below `min_workers`. Growing is
immediate because waiting work costs the trainer time; shrinking waits because a worker (a
process, a Ray actor) costs seconds to start again.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ElasticBounds:
    min_workers: int
    max_workers: int
    idle_timeout_s: float = 10.0

    def __post_init__(self) -> None:
        if not 1 <= self.min_workers <= self.max_workers:
            raise ValueError(f"need 1 <= min_workers <= max_workers, got {self.min_workers} and {self.max_workers}")

    def clamp(self, workers: int) -> int:
        return min(max(workers, self.min_workers), self.max_workers)

    def target(self, current: int, demand: int, idle_for: list[float]) -> int:
        """`current`: the pool's target now; `demand`: jobs ready or running; `idle_for`: how
        long each idle worker has been idle (seconds)."""
        if demand > current:
            return self.clamp(demand)
        expired = sum(idle >= self.idle_timeout_s for idle in idle_for)
        return self.clamp(max(current - expired, demand))
