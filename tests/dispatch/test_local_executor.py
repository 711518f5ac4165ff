"""The local executor with real threads and real worker processes."""

import os
import signal
import time

import pytest

from posttrain.dispatch import Job, RetryPolicy
from posttrain.dispatch.factory import make_executor
from tests.dispatch import jobs
from tests.dispatch.elastic_burst import BOUNDS, burst_grows_then_idle_shrinks


def results(executor, n, timeout=60.0):
    out = []
    deadline = time.monotonic() + timeout
    while len(out) < n:
        out.append(executor.results.get(timeout=max(deadline - time.monotonic(), 0.01)))
    return out


def wait_for(predicate, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


@pytest.fixture
def thread_executor():
    made = []

    def make(fn, **kw):
        executor = make_executor(fn, "local", worker_kind="thread", **kw)
        made.append(executor)
        return executor

    yield make
    for executor in made:
        executor.shutdown()


def test_every_job_returns_once(thread_executor):
    executor = thread_executor(jobs.echo, workers=3)
    for i in range(20):
        executor.submit(Job(f"j{i}", i))
    got = results(executor, 20)
    assert sorted(r.value["payload"] for r in got) == list(range(20))
    assert all(r.ok and r.value["attempt"] == 1 for r in got)
    assert executor.results.empty() and executor.stats.completed == 20


def test_failures_are_retried_with_backoff_then_given_up(thread_executor):
    executor = thread_executor(jobs.fail_first, workers=1, retry=RetryPolicy(max_attempts=3, backoff_s=0.1))
    started = time.monotonic()
    executor.submit(Job("flaky", {"failures": 2}))
    (result,) = results(executor, 1)
    assert result.ok and result.value == 3 and result.job.attempts == 2
    assert time.monotonic() - started >= 0.1 + 0.2  # waited 0.1 s, then 0.2 s
    assert len(result.job.errors) == 2 and "planned failure 1" in result.job.errors[0]
    executor.submit(Job("broken", {"failures": 99}))
    (result,) = results(executor, 1)
    assert not result.ok and "planned failure 3" in result.error
    assert executor.stats.retries == 4 and executor.stats.failed == 1


def test_high_priority_work_preempts_a_low_priority_job(thread_executor, tmp_path):
    executor = thread_executor(jobs.hold, workers=1)
    low = {"marker": str(tmp_path / "low"), "release": str(tmp_path / "go"), "seconds": 30}
    executor.submit(Job("low", low, priority=0))
    wait_for((tmp_path / "low").exists)
    executor.submit(Job("high", {"seconds": 0.05}, priority=1))
    (first,) = results(executor, 1)
    (tmp_path / "go").write_text("")
    (second,) = results(executor, 1)
    assert (first.job.id, second.job.id) == ("high", "low")
    assert second.job.preemptions == 1 and second.job.attempts == 0  # a preemption is not a failure
    assert executor.stats.preemptions == 1


def test_equal_priority_never_preempts(thread_executor, tmp_path):
    executor = thread_executor(jobs.hold, workers=1)
    executor.submit(Job("first", {"marker": str(tmp_path / "m"), "seconds": 0.3}))
    wait_for((tmp_path / "m").exists)
    executor.submit(Job("second", {"seconds": 0.01}))
    assert [r.job.id for r in results(executor, 2)] == ["first", "second"]
    assert executor.stats.preemptions == 0


def test_the_pool_grows_and_shrinks_while_running(thread_executor, tmp_path):
    release = tmp_path / "go"
    executor = thread_executor(jobs.hold, workers=1)
    for i in range(3):
        executor.submit(Job(f"h{i}", {"release": str(release), "marker": str(tmp_path / f"m{i}")}))
    wait_for(lambda: executor.status()["running"] == 1)
    time.sleep(0.05)
    assert executor.status()["running"] == 1 and executor.status()["queued"] == 2
    executor.scale(3)
    wait_for(lambda: executor.status()["running"] == 3)
    release.write_text("")
    results(executor, 3)
    executor.scale(1)
    wait_for(lambda: len(executor.status()["workers"]) == 1)


def test_an_elastic_pool_grows_under_a_burst_and_shrinks_when_idle(thread_executor, tmp_path):
    burst_grows_then_idle_shrinks(thread_executor(jobs.hold, workers=1, elastic=BOUNDS), tmp_path)


def test_a_killed_worker_process_is_replaced_and_its_job_retried(tmp_path):
    executor = make_executor(
        jobs.hold, "local", workers=2, worker_kind="process", retry=RetryPolicy(max_attempts=3, backoff_s=0.05)
    )
    try:
        marker = tmp_path / "pid"
        executor.submit(Job("victim", {"marker": str(marker), "seconds": 0.2}))
        wait_for(marker.exists)
        pid = int(marker.read_text())
        pids_before = {w["pid"] for w in executor.status()["workers"]}
        os.kill(pid, signal.SIGKILL)  # mid-job
        (result,) = results(executor, 1)
        assert result.ok and result.value["attempt"] == 2 and result.value["pid"] != pid
        assert "died" in result.job.errors[0]
        wait_for(lambda: len(executor.status()["workers"]) == 2)
        status = executor.status()
        assert status["stats"]["worker_deaths"] == 1 and status["stats"]["retries"] == 1
        assert pid not in {w["pid"] for w in status["workers"]} and pid in pids_before
        # the pool still works
        executor.submit(Job("after", {"seconds": 0.0}))
        assert results(executor, 1)[0].ok
    finally:
        executor.shutdown()
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
