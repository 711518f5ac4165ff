"""The elastic replicas' size rule on its own (the Ray run: test_elastic_replicas.py)."""

from posttrain.pipeline.replica_sizing import ReplicaSizer
from posttrain.scheduler.elastic import ElasticBounds


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
