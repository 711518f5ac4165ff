"""The job record, what a job function sees while it runs, and what comes back."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


class Preempted(Exception):
    """Raised by a job function that noticed `ctx.cancelled()`: the job goes back to the queue
    without counting as a failed attempt."""


@dataclass
class Job:
    """One unit of work. `priority` orders classes of work (higher first, and a waiting job
    preempts a running one of lower priority when no worker is free); within a class, jobs of
    different domains share the workers by the queue's domain weights, and one domain's jobs
    run first in, first out."""

    id: str
    payload: Any
    domain: str = "default"
    priority: int = 0
    attempts: int = 0  # failed attempts so far
    preemptions: int = 0
    not_before: float = 0.0  # time.monotonic() before which it may not start (retry backoff)
    errors: list[str] = field(default_factory=list)
    seq: int = -1  # arrival order, given by the queue on first put


@dataclass
class JobResult:
    """A finished job: `value` on success, `error` (the last failure) once retries ran out."""

    job: Job
    value: Any = None
    error: str | None = None
    worker: str = ""
    where: str = ""  # the worker's "HOST/PID" (Ray: "NODE_ID/PID")
    duration_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class JobContext:
    """Passed to the job function with the payload. A long job polls `cancelled()` and raises
    `Preempted` when it is set; a job that never polls simply runs to the end."""

    job_id: str
    attempt: int
    worker: str
    cancelled: Callable[[], bool] = lambda: False


JobFunction = Callable[[Any, JobContext], Any]
