"""Which running job to preempt when higher-priority work waits and no worker is free."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RunningJob:
    job_id: str
    priority: int
    started: float


def choose_victim(running: list[RunningJob], waiting_priority: int) -> str | None:
    """The lowest-priority running job below `waiting_priority`; among equals the one started
    last, whose loss throws away the least work. None when every running job ranks as high."""
    lower = [r for r in running if r.priority < waiting_priority]
    if not lower:
        return None
    return min(lower, key=lambda r: (r.priority, -r.started)).job_id
