"""The work queue: priority classes, then domain weights, then first in, first out.

Domains share the workers by weight with stride scheduling: each domain has a pass value that
grows by 1/weight every time one of its jobs is dispatched, and the next job comes from the
waiting domain with the lowest pass. Over any stretch where domains a and b both have work
waiting, a gets weight_a / weight_b times as many dispatches as b. A domain that had nothing
waiting re-enters at the current virtual time, so idling does not bank credit. Weights can be
changed while jobs wait; the change applies from the next dispatch.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterable

from posttrain.dispatch.job import Job


def next_domain(passes: dict[str, float], candidates: Iterable[str]) -> str:
    """The candidate domain with the lowest pass value (ties: by name, for determinism)."""
    return min(candidates, key=lambda d: (passes.get(d, 0.0), d))


class WorkQueue:
    def __init__(self, weights: dict[str, float] | None = None) -> None:
        self._weights: dict[str, float] = {}
        self._jobs: dict[str, Job] = {}
        self._passes: dict[str, float] = {}
        self._vtime = 0.0
        self._seq = itertools.count()
        self._lock = threading.Lock()
        self.set_weights(weights or {})

    # ---- weights ---------------------------------------------------------------------------

    def set_weights(self, weights: dict[str, float]) -> None:
        bad = {d: w for d, w in weights.items() if not w > 0}
        if bad:
            raise ValueError(f"domain weights must be > 0: {bad}")
        with self._lock:
            self._weights.update(weights)

    @property
    def weights(self) -> dict[str, float]:
        with self._lock:
            return dict(self._weights)

    def _weight(self, domain: str) -> float:
        return self._weights.get(domain, 1.0)

    # ---- jobs ------------------------------------------------------------------------------

    def put(self, job: Job) -> None:
        """Queue a job (new, retried or preempted: a job keeps its first arrival number, so a
        retried job does not lose its place among its domain's jobs)."""
        with self._lock:
            if job.id in self._jobs:
                raise ValueError(f"job {job.id!r} is already queued")
            if job.seq < 0:
                job.seq = next(self._seq)
            if not any(j.domain == job.domain for j in self._jobs.values()):
                self._passes[job.domain] = max(self._passes.get(job.domain, 0.0), self._vtime)
            self._jobs[job.id] = job

    def pop(self, now: float) -> Job | None:
        """The next job to run among those whose backoff has passed, or None."""
        with self._lock:
            ready = [j for j in self._jobs.values() if j.not_before <= now]
            if not ready:
                return None
            top = max(j.priority for j in ready)
            ready = [j for j in ready if j.priority == top]
            domain = next_domain(self._passes, {j.domain for j in ready})
            job = min((j for j in ready if j.domain == domain), key=lambda j: j.seq)
            self._vtime = self._passes.get(domain, 0.0)
            self._passes[domain] = self._vtime + 1.0 / self._weight(domain)
            del self._jobs[job.id]
            return job

    def remove(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.pop(job_id, None)

    def top_priority(self, now: float) -> int | None:
        """The highest priority among jobs ready to run, or None."""
        with self._lock:
            ready = [j.priority for j in self._jobs.values() if j.not_before <= now]
            return max(ready) if ready else None

    def next_ready_in(self, now: float) -> float | None:
        """Seconds until the earliest waiting job may start (0 if one may now), or None if empty."""
        with self._lock:
            if not self._jobs:
                return None
            return max(0.0, min(j.not_before for j in self._jobs.values()) - now)

    def snapshot(self) -> list[Job]:
        """The queued jobs, in arrival order."""
        with self._lock:
            return sorted(self._jobs.values(), key=lambda j: j.seq)

    def __len__(self) -> int:
        with self._lock:
            return len(self._jobs)

    def __contains__(self, job_id: str) -> bool:
        with self._lock:
            return job_id in self._jobs
