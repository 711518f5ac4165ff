"""The elastic pool's size rule (the pools that follow it: test_local_executor.py, test_ray_executor.py)."""

import pytest

from posttrain.dispatch.elastic import ElasticBounds

BOUNDS = ElasticBounds(min_workers=2, max_workers=6, idle_timeout_s=5.0)


def test_a_burst_grows_the_pool_at_once_up_to_the_maximum():
    assert BOUNDS.target(current=2, demand=4, idle_for=[]) == 4
    assert BOUNDS.target(current=2, demand=50, idle_for=[]) == 6


def test_idle_workers_go_after_the_timeout_down_to_the_work_and_the_minimum():
    assert BOUNDS.target(current=6, demand=1, idle_for=[4.9] * 5) == 6  # not idle long enough
    assert BOUNDS.target(current=6, demand=3, idle_for=[5.0] * 3) == 3  # still 3 jobs to run
    assert BOUNDS.target(current=6, demand=0, idle_for=[9.0] * 6) == 2  # never below the minimum


def test_bounds_must_be_ordered():
    with pytest.raises(ValueError, match="min_workers <= max_workers"):
        ElasticBounds(min_workers=3, max_workers=2)
