import pytest

from posttrain.dispatch import RetryPolicy, RunningJob, choose_victim


def test_backoff_doubles_and_is_capped():
    policy = RetryPolicy(max_attempts=5, backoff_s=0.5, backoff_max_s=3.0)
    assert [policy.delay(n) for n in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    assert not policy.gives_up(4) and policy.gives_up(5)
    with pytest.raises(ValueError):
        RetryPolicy(max_attempts=0)


def test_the_victim_is_the_lowest_priority_job_started_last():
    running = [RunningJob("old-low", 0, 1.0), RunningJob("new-low", 0, 2.0), RunningJob("mid", 1, 3.0)]
    assert choose_victim(running, waiting_priority=2) == "new-low"
    assert choose_victim(running, waiting_priority=1) == "new-low"
    assert choose_victim([RunningJob("mid", 1, 3.0)], waiting_priority=2) == "mid"
    assert choose_victim(running, waiting_priority=0) is None  # equal rank never preempts
    assert choose_victim([], waiting_priority=9) is None
