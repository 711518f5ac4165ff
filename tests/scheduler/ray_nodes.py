"""Real Ray nodes for tests: posttrain/scheduler/local_cluster.py, and joining them."""

import time

from posttrain.scheduler.local_cluster import FAST_HEALTH_CHECK, ROOT, RayNode, free_port

RayHead = RayNode  # a head is a RayNode started without `head=`

__all__ = ["FAST_HEALTH_CHECK", "ROOT", "RayHead", "RayNode", "connect", "free_port", "wait_for"]


def wait_for(condition, what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what} within {timeout} s"
        time.sleep(0.3)


def connect(port: int, monkeypatch) -> None:
    """`address = "auto"` finds the cluster through RAY_ADDRESS, as on a cluster's own nodes."""
    from posttrain.scheduler.ray_worker import ensure_ray

    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{port}")
    deadline = time.monotonic() + 90
    while True:
        try:
            return ensure_ray("auto")
        except ConnectionError:  # the head's GCS takes a few seconds to come up
            assert time.monotonic() < deadline, "the Ray head did not come up in 90 s"
            time.sleep(1)
