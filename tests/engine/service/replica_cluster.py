"""What the engine-replica tests share: a real 2-node Ray cluster on this machine (the driver's
head, with no resources for rollouts or engines, and a worker node offering both), and an async
tiny-model run config whose rollouts and replicas go to that node."""

from __future__ import annotations

import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

from tests.dispatch.ray_nodes import RayNode, connect, start_head, wait_for

HOLD_LIMIT_S = 90.0

NODE = {"num_cpus": 1, "object_store_memory": 80_000_000}


@contextmanager
def head_and_engine_node(monkeypatch, **worker_node):
    """Yields the worker node's Ray node id; stops both nodes (and the driver's Ray) after."""
    import ray

    temp = Path(tempfile.mkdtemp(prefix="ptrep-", dir="/tmp"))
    head = start_head(temp, include_dashboard="false", **NODE)
    nodes = [head]
    try:
        connect(head.port, monkeypatch)
        nodes.append(RayNode(temp, head=head.port, resources={"rollout": 2, "engine": 2}, **NODE, **worker_node))
        wait_for(lambda: any("engine" in n["Resources"] for n in ray.nodes() if n["Alive"]), "the worker node joins")
        yield next(n["NodeID"] for n in ray.nodes() if n["Alive"] and "engine" in n["Resources"])
    finally:
        ray.shutdown()
        for node in reversed(nodes):
            node.stop()
        shutil.rmtree(temp, ignore_errors=True)


def replica_run_config(tiny_config, steps: int, engine: str, dispatch: str = "") -> Path:
    """An async run of `steps` steps; `engine`, `dispatch`: TOML lines added to those sections."""
    config = tiny_config(steps=steps, checkpoint_every=steps)
    config.write_text(
        config.read_text().replace("threads = 1\n", 'threads = 1\nmode = "async"\n')
        + f"\n[engine]\n{engine}replica_cpus = 0\nreplica_resources = {{ engine = 1 }}\n"
        + '\n[dispatch]\nexecutor = "ray"\naddress = "auto"\nworkers = 2\ncpus_per_worker = 0\n'
        + f"worker_resources = {{ rollout = 1 }}\nbackoff_s = 0.1\n{dispatch}"
    )
    return config


def rollout_held_while(job, ctx, gate: str, median_s: float = 1.0):
    """A rollout with its 1 s environment wait that then waits while the file `gate` exists
    (module-level: the workers import it). A test holds the run's progress with it while a
    killed replica is replaced, so that how fast Ray restarts an actor under load does not
    decide whether any jobs are left for the replacement to serve."""
    import time

    from posttrain.dispatch import Preempted
    from posttrain.pipeline.bench import rollout_with_environment_time

    group = rollout_with_environment_time(job, ctx, median_s=median_s, sigma=0.0)
    deadline = time.monotonic() + HOLD_LIMIT_S
    while Path(gate).exists() and time.monotonic() < deadline:
        if ctx.cancelled():
            raise Preempted()
        time.sleep(0.05)
    return group
