"""The elastic replicas' size rule on its own (the Ray run: test_elastic_replicas.py)."""

import pytest

from posttrain.dispatch.elastic import ElasticBounds
from posttrain.engine.service.replica_sizing import ReplicaSizer


def sizer() -> ReplicaSizer:
    return ReplicaSizer(ElasticBounds(min_workers=1, max_workers=3, idle_timeout_s=5.0), jobs_per_replica=4)


def test_a_long_queue_grows_the_replicas_at_once_up_to_the_maximum():
    rule = sizer()
    assert rule.target(current=1, jobs=4, now=0.0) == 1  # one replica's share
    assert rule.target(current=1, jobs=5, now=0.0) == 2
    assert rule.target(current=2, jobs=40, now=1.0) == 3


def test_replicas_unneeded_for_the_idle_timeout_go_down_to_the_work_and_the_minimum():
    rule = sizer()
    assert rule.target(current=3, jobs=12, now=0.0) == 3
    assert rule.target(current=3, jobs=3, now=4.9) == 3  # not unneeded long enough
    assert rule.target(current=3, jobs=5, now=5.0) == 2  # rank 2 unneeded since 0.0; rank 1 needed again
    assert rule.target(current=2, jobs=0, now=9.9) == 2  # rank 1 last needed at 5.0
    assert rule.target(current=2, jobs=0, now=10.0) == 1
    assert rule.target(current=1, jobs=0, now=100.0) == 1  # never below the minimum


def test_a_replica_grown_later_starts_its_idle_clock_when_it_joins():
    rule = sizer()
    rule.target(current=1, jobs=0, now=0.0)
    assert rule.target(current=1, jobs=9, now=50.0) == 3
    assert rule.target(current=3, jobs=0, now=54.0) == 3  # ranks 1 and 2 joined at 50.0
    assert rule.target(current=3, jobs=0, now=55.0) == 1


def test_the_jobs_a_step_admits_at_once_are_not_a_burst_unless_they_keep_the_queue_long():
    rule = ReplicaSizer(ElasticBounds(min_workers=1, max_workers=3, idle_timeout_s=5.0), jobs_per_replica=4, window_s=2)
    for tenth in range(20):
        rule.observe(jobs=1, now=tenth / 10)
    assert rule.target(current=1, jobs=6, now=2.0) == 1  # a spike at admission: the last 2 s held 1 job
    for tenth in range(21, 40):
        rule.observe(jobs=6, now=tenth / 10)
    assert rule.target(current=1, jobs=6, now=4.0) == 2  # six jobs for the whole window: a burst
    assert rule.demand_jobs == pytest.approx(6.0)


def test_a_replica_the_averaged_queue_does_not_need_is_let_go_after_the_idle_timeout():
    rule = ReplicaSizer(ElasticBounds(min_workers=1, max_workers=2, idle_timeout_s=3.0), jobs_per_replica=4, window_s=1)
    assert rule.target(current=2, jobs=0, now=0.0) == 2  # both ranks start as needed
    for tenth in range(1, 40):  # admission spikes of 5 jobs, each gone within 0.2 s of a 1 s step
        rule.observe(jobs=5 if tenth % 10 < 2 else 0, now=tenth / 10)
    assert rule.target(current=2, jobs=0, now=2.9) == 2  # rank 1 needed at 0.0, and never by the spikes
    assert rule.target(current=2, jobs=0, now=3.0) == 1


def test_the_window_mean_weighs_each_sample_by_how_long_it_held():
    from posttrain.engine.service.replica_sizing import window_mean

    assert window_mean([(0.0, 4)], now=10.0, window_s=2.0) == 4.0
    assert window_mean([(0.0, 4), (9.0, 0)], now=10.0, window_s=2.0) == 2.0  # 4 held over (8, 9], 0 over (9, 10]
    assert window_mean([(9.5, 2), (9.9, 6)], now=10.0, window_s=1.0) == pytest.approx(2.4)  # 2 held from 9.0
    assert window_mean([(0.0, 4), (9.0, 0)], now=10.0, window_s=0.0) == 0.0  # no window: the latest


def test_a_replica_still_being_placed_is_not_idle():
    rule = sizer()
    assert rule.target(current=1, jobs=9, now=0.0) == 3
    # unneeded for 6 s, past the 5 s timeout; rank 2 still being placed keeps itself and those below
    assert rule.target(current=3, jobs=0, now=6.0, starting=frozenset({2})) == 3
    assert rule.target(current=3, jobs=0, now=10.9) == 3  # placed: the clocks started at 6.0
    assert rule.target(current=3, jobs=0, now=11.0) == 1
