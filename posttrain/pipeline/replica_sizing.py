"""How many engine replicas the rollout work needs: the elastic pool's rule (scheduler/elastic.py)
applied to replicas, with a replica's share of the work queue as its unit.

    sizer = ReplicaSizer(ElasticBounds(1, 4, idle_timeout_s=10), jobs_per_replica=4)
    target = sizer.target(current=2, jobs=13, now=time.monotonic())   # 4: ceil(13 / 4)

The work (jobs waiting + running) asks for ceil(jobs / jobs_per_replica) replicas. Replicas are
ranked 0..current-1; the one at rank r is needed while the work asks for more than r, so the
highest ranks are the first to fall idle, and a replica unneeded for idle_timeout_s is let go
(never below the minimum). Growing is at once, as for workers.
"""

from __future__ import annotations

import math

from posttrain.scheduler.elastic import ElasticBounds


class ReplicaSizer:
    def __init__(self, bounds: ElasticBounds, jobs_per_replica: int) -> None:
        self.bounds = bounds
        self.jobs_per_replica = jobs_per_replica
        self._needed_at: list[float] = []  # by rank: when the work last needed that many replicas

    def target(self, current: int, jobs: int, now: float) -> int:
        demand = math.ceil(jobs / self.jobs_per_replica)
        self._needed_at = (self._needed_at + [now] * current)[:current]  # a new rank starts as needed now
        for rank in range(min(demand, current)):
            self._needed_at[rank] = now
        idle_for = [now - self._needed_at[rank] for rank in range(demand, current)]
        target = self.bounds.target(current, demand, idle_for)
        self._needed_at = (self._needed_at + [now] * target)[:target]  # the ranks grown now start needed
        return target
