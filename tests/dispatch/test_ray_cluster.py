"""An async training run on a real 3-node Ray cluster on this machine: a head and two worker
nodes, each its own `ray start`, rollout workers placed by a custom resource that only the
worker nodes have. One worker node is lost mid-run (its raylet and workers SIGKILLed) and then
restarted: the run finishes, trains every stream slot exactly once, counts the retries, and the
rejoined node generates rollouts again."""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
from functools import partial
from pathlib import Path

import pytest

from tests.dispatch.ray_nodes import FAST_HEALTH_CHECK, connect, start_head, start_joined, wait_for

ray = pytest.importorskip("ray", reason="the ray extra is not installed (make setup installs it)")

STEPS = 10
NODE = {"num_cpus": 1, "object_store_memory": 80_000_000}


def nodes_with(resource: str) -> list[str]:
    return [n["NodeID"] for n in ray.nodes() if n["Alive"] and resource in n["Resources"]]


@pytest.mark.slow
def test_a_run_survives_losing_a_worker_node_and_the_rejoined_node_gets_work(tmp_path, tiny_config, monkeypatch):
    from posttrain.pipeline.bench import rollout_with_environment_time, train_one

    temp = Path(tempfile.mkdtemp(prefix="ptray-", dir="/tmp"))
    head = start_head(temp, include_dashboard="false", env=FAST_HEALTH_CHECK, **NODE)  # no rollout resource
    nodes = [head]
    out = tmp_path / "run"
    rejoined: list[str] = []
    try:
        connect(head.port, monkeypatch)
        for name in ("node_a", "node_b"):  # one after the other: two joining at once time out here
            joined = partial(nodes_with, name)
            nodes.append(start_joined(temp, head.port, {"rollout": 1, name: 1}, joined, f"{name} joins", **NODE))
        config = tiny_config(steps=STEPS, checkpoint_every=STEPS)
        config.write_text(
            config.read_text().replace("threads = 1\n", 'threads = 1\nmode = "async"\n')
            + '\n[dispatch]\nexecutor = "ray"\naddress = "auto"\nworkers = 2\ncpus_per_worker = 0\n'
            + "worker_resources = { rollout = 1 }\nbackoff_s = 0.1\n"
        )
        metrics = out / "metrics.jsonl"

        def lose_node_a_and_restart_it():
            wait_for(lambda: metrics.is_file() and len(metrics.read_text().splitlines()) >= 2, "two steps")
            nodes[1].kill()
            joined = partial(nodes_with, "node_a")
            nodes[1] = start_joined(temp, head.port, {"rollout": 1, "node_a": 1}, joined, "node_a rejoins", **NODE)
            rejoined.extend(nodes_with("node_a"))

        chaos = threading.Thread(target=lose_node_a_and_restart_it, daemon=True)
        chaos.start()
        # each rollout also waits 1 s, as an episode waits on its sandbox: the run outlives the rejoin
        summary = train_one(config, out, partial(rollout_with_environment_time, median_s=1.0, sigma=0.0))
        chaos.join(timeout=120)
    finally:
        ray.shutdown()
        for node in reversed(nodes):
            node.stop()
        shutil.rmtree(temp, ignore_errors=True)

    dispatch = summary["pipeline"]["dispatch"]
    assert summary["steps"] == STEPS and dispatch["failed"] == 0, dispatch
    assert dispatch["worker_deaths"] >= 1 and dispatch["retries"] >= 1, dispatch  # the lost node's job
    records = [json.loads(line) for line in metrics.read_text().splitlines()]
    assert records[-1]["dispatch/retries"] == dispatch["retries"]
    trained = sorted(slot for r in records for slot in r["stream_slots"])
    assert trained == sorted(f"{step}:{slot}" for step in range(1, STEPS + 1) for slot in range(3)), trained
    where = [w for r in records for w in r["rollout_workers"]]
    assert rejoined and any(w.startswith(rejoined[0]) for w in where), (rejoined, where)
