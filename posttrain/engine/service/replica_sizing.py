"""How many engine replicas the rollout work needs: the elastic pool's rule (dispatch/elastic.py)
applied to replicas, with a replica's share of the work queue as its unit.

    sizer = ReplicaSizer(ElasticBounds(1, 4, idle_timeout_s=10), jobs_per_replica=4, window_s=2)
    sizer.observe(jobs=13, now=t)                     # on a clock, between steps too
    target = sizer.target(current=2, jobs=13, now=t)  # 4: ceil(13 / 4)

The work is the number of jobs waiting + running, averaged over the last window_s seconds (each
observation holds until the next): a step's admission puts several jobs in the queue at once,
and a queue that is long only for that moment is not a burst, while rollouts that keep it long
are. The work asks for ceil(mean jobs / jobs_per_replica) replicas. Replicas are ranked
0..current-1; the one at rank r is needed while the work asks for more than r, so the highest
ranks are the first to fall idle, and a replica unneeded for idle_timeout_s is let go (never
below the minimum); a replica still being placed is not idle, nor any rank below it. Growing
is at once, as for workers. window_s = 0 sizes on the jobs of the moment.

    sampler = DemandSampler(sizer, jobs=lambda: queued + running)   # observe() on a clock
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable

from posttrain.dispatch.elastic import ElasticBounds


class ReplicaSizer:
    def __init__(self, bounds: ElasticBounds, jobs_per_replica: int, window_s: float = 0.0) -> None:
        self.bounds = bounds
        self.jobs_per_replica = jobs_per_replica
        self.window_s = window_s
        self.demand_jobs = 0.0  # the work the last target() saw
        self._needed_at: list[float] = []  # by rank: when the work last needed that many replicas
        self._samples: deque[tuple[float, int]] = deque()  # (time, jobs), oldest first
        self._lock = threading.Lock()  # observe() runs on the sampling thread

    def observe(self, jobs: int, now: float) -> None:
        """The queue's length at `now`; the ranks it needs count as needed then."""
        with self._lock:
            self._observe(jobs, now)

    def target(self, current: int, jobs: int, now: float, starting: frozenset[int] = frozenset()) -> int:
        """`starting`: the ranks still being placed. Their idle clock has not started, nor has
        that of the ranks below them (the highest rank goes first): letting a replica go before
        it served anything would throw away its start-up (seconds of model loading) and pay it
        again at the next burst."""
        with self._lock:
            self._needed_at = (self._needed_at + [now] * current)[:current]  # a new rank starts as needed now
            for rank in range(max(starting, default=-1) + 1):
                self._needed_at[rank] = now
            demand = self._observe(jobs, now)
            idle_for = [now - self._needed_at[rank] for rank in range(demand, current)]
            target = self.bounds.target(current, demand, idle_for)
            self._needed_at = (self._needed_at + [now] * target)[:target]  # the ranks grown now start needed
            return target

    def _observe(self, jobs: int, now: float) -> int:
        """Add the sample, mark the ranks the averaged work needs as needed now; the demand."""
        self._samples.append((now, jobs))
        while len(self._samples) > 1 and self._samples[1][0] <= now - self.window_s:
            self._samples.popleft()  # the sample in force at the window's start stays
        self.demand_jobs = window_mean(list(self._samples), now, self.window_s)
        demand = math.ceil(round(self.demand_jobs / self.jobs_per_replica, 9))
        for rank in range(min(demand, len(self._needed_at))):
            self._needed_at[rank] = now
        return demand


def window_mean(samples: list[tuple[float, int]], now: float, window_s: float) -> float:
    """The time-weighted mean over (now - window_s, now] of a step function: each (time, value)
    sample holds until the next. Before the first sample the first value holds; window_s = 0 (or
    a single sample) gives the latest value."""
    if window_s <= 0 or len(samples) == 1:
        return float(samples[-1][1])
    start = now - window_s
    begins = [start] + [max(t, start) for t, _ in samples[1:]]
    ends = begins[1:] + [now]
    held = zip(samples, begins, ends, strict=True)
    return sum(value * max(end - begin, 0.0) for (_, value), begin, end in held) / window_s


class DemandSampler:
    """Reads the work queue (`jobs()`: waiting + running) into a ReplicaSizer every period_s from
    a daemon thread, between steps too: the pool changes at step boundaries only (this thread
    measures, EngineReplicas.resize acts)."""

    def __init__(self, sizer: ReplicaSizer, jobs: Callable[[], int], period_s: float = 0.1) -> None:
        self.sizer = sizer
        self.jobs = jobs
        self.period_s = period_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="replica-demand", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.period_s):
            self.sizer.observe(self.jobs(), time.monotonic())

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
