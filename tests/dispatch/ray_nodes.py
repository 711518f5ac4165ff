"""Real Ray nodes for tests: posttrain/dispatch/local_cluster.py, and joining them."""

import time

from posttrain.dispatch.local_cluster import FAST_HEALTH_CHECK, ROOT, RayNode, free_port, start_head

__all__ = ["FAST_HEALTH_CHECK", "ROOT", "RayNode", "connect", "free_port", "start_head", "start_joined", "wait_for"]


def wait_for(condition, what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what} within {timeout} s"
        time.sleep(0.3)


def start_joined(temp, head: int, resources: dict, joined, what: str, attempts: int = 3, **flags) -> RayNode:
    """A worker node started and seen in the cluster (`joined()` true). Under FAST_HEALTH_CHECK a
    raylet that misses three 0.5 s health checks while it starts on a loaded machine (the other
    test worker busy on both cores) is declared dead by the head and exits, and `ray start
    --block` with it: such a node is started again, up to `attempts` times."""
    for _ in range(attempts):
        node = RayNode(temp, head=head, resources=resources, **flags)
        try:
            wait_for(lambda node=node: joined() or not node.alive(), what)
        except AssertionError:
            node.stop()  # not the caller's yet: nothing else would stop it
            raise
        if node.alive():
            return node
        node.stop()
        print(f"{what}: its `ray start` exited (code {node.process.returncode}) while joining; starting it again")
    raise AssertionError(f"{what}: its `ray start` exited while joining, {attempts} times")


def connect(port: int, monkeypatch) -> None:
    """`address = "auto"` finds the cluster through RAY_ADDRESS, as on a cluster's own nodes."""
    from posttrain.dispatch.ray_worker import ensure_ray

    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{port}")
    deadline = time.monotonic() + 90
    while True:
        try:
            return ensure_ray("auto")
        except ConnectionError:  # the head's GCS takes a few seconds to come up
            assert time.monotonic() < deadline, "the Ray head did not come up in 90 s"
            time.sleep(1)
