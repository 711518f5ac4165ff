"""A burst of work on an elastic pool, whatever its workers are (threads, Ray actors)."""

import time
from pathlib import Path

from posttrain.dispatch import Job
from posttrain.dispatch.elastic import ElasticBounds
from tests.dispatch import jobs

BOUNDS = ElasticBounds(min_workers=1, max_workers=3, idle_timeout_s=0.5)


def wait_for(predicate, what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"{what} within {timeout} s"
        time.sleep(0.02)


def burst_grows_then_idle_shrinks(executor, tmp_path: Path, start_s: float = 10.0) -> None:
    """5 jobs held until released: the pool of 1 grows to 3 (its max) while 2 still wait; once
    they are done and the workers idle for the timeout, it shrinks back to 1."""
    wait_for(lambda: len(executor.status()["workers"]) == 1, "the pool starts with 1", start_s)
    release = tmp_path / "release"
    for i in range(5):
        executor.submit(Job(f"burst{i}", {"release": str(release)}))
    wait_for(lambda: executor.status()["running"] == 3, "the pool grows to 3 under the burst", start_s)
    assert executor.target_workers == 3 and executor.status()["queued"] == 2
    release.write_text("")
    done = [executor.results.get(timeout=60) for _ in range(5)]
    assert all(r.ok for r in done)
    idle_from = time.monotonic()
    wait_for(lambda: len(executor.status()["workers"]) == 1, "the idle pool shrinks to 1", 10 + start_s)
    assert time.monotonic() - idle_from >= BOUNDS.idle_timeout_s * 0.5  # it waited for the idling
    assert executor.target_workers == 1 and executor.stats.workers_retired == 2


__all__ = ["BOUNDS", "burst_grows_then_idle_shrinks", "jobs"]
