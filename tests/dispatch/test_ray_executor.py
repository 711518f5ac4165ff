"""The ray executor on a real local Ray cluster (ray.init() in the fixture)."""

import os
import signal
import time

import pytest

from posttrain.dispatch import Job, RetryPolicy
from posttrain.dispatch.factory import make_executor
from tests.dispatch import jobs
from tests.dispatch.elastic_burst import BOUNDS, burst_grows_then_idle_shrinks

ray = pytest.importorskip("ray", reason="the ray extra is not installed (make setup installs it)")


@pytest.fixture(scope="module")
def ray_cluster():
    from posttrain.dispatch.ray_worker import ensure_ray

    ensure_ray(num_cpus=4)
    yield
    ray.shutdown()


def results(executor, n, timeout=120.0):
    deadline = time.monotonic() + timeout
    return [executor.results.get(timeout=max(deadline - time.monotonic(), 0.01)) for _ in range(n)]


def test_ray_actors_run_jobs_retry_and_survive_a_killed_actor(ray_cluster, tmp_path):
    executor = make_executor(jobs.hold, "ray", workers=2, retry=RetryPolicy(max_attempts=3, backoff_s=0.05))
    try:
        for i in range(4):
            executor.submit(Job(f"j{i}", {"seconds": 0.0}))
        got = results(executor, 4)
        assert sorted(r.job.id for r in got) == ["j0", "j1", "j2", "j3"] and all(r.ok for r in got)
        assert {r.value["pid"] for r in got} <= {w["pid"] for w in executor.status()["workers"]}
        assert os.getpid() not in {r.value["pid"] for r in got}  # ran in actor processes

        marker = tmp_path / "pid"
        executor.submit(Job("victim", {"marker": str(marker), "seconds": 0.3}))
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert time.monotonic() < deadline
            time.sleep(0.01)
        pid = int(marker.read_text())
        os.kill(pid, signal.SIGKILL)
        (result,) = results(executor, 1)
        assert result.ok and result.value["attempt"] == 2 and result.value["pid"] != pid
        assert executor.stats.worker_deaths == 1 and executor.stats.retries == 1
    finally:
        executor.shutdown()


def test_an_elastic_pool_of_actors_grows_under_a_burst_and_shrinks_when_idle(ray_cluster, tmp_path):
    executor = make_executor(jobs.hold, "ray", workers=1, elastic=BOUNDS)
    try:
        burst_grows_then_idle_shrinks(executor, tmp_path, start_s=60.0)  # an actor starts in seconds
    finally:
        executor.shutdown()


def test_actors_that_die_as_they_start_stop_the_executor_with_the_reason(ray_cluster, tmp_path, monkeypatch):
    """A job function the actors cannot import (its module exists only on the driver's path):
    every actor dies as it starts. The executor gives up after STILLBORN_LIMIT of them in a row,
    with Ray's reason, instead of replacing them forever."""
    import sys

    from posttrain.dispatch import executor as executor_module

    (tmp_path / "driver_only_jobs.py").write_text("def run(payload, ctx):\n    return payload\n")
    monkeypatch.syspath_prepend(str(tmp_path))  # after ray.init: the actors' path lacks it
    import driver_only_jobs

    monkeypatch.setattr(executor_module, "STILLBORN_LIMIT", 3)
    executor = make_executor(driver_only_jobs.run, "ray", workers=1)
    try:
        executor.submit(Job("j0", {}))
        deadline = time.monotonic() + 120
        with pytest.raises(RuntimeError, match=r"3 ray workers in a row died before running a job; the last: .+"):
            while time.monotonic() < deadline:
                executor.check()
                time.sleep(0.1)
        assert executor.stats.completed == 0 and 3 <= executor.stats.worker_deaths <= 4
    finally:
        executor.shutdown()
        sys.modules.pop("driver_only_jobs", None)
