"""Engine replicas as Ray actors on a real 2-node Ray cluster on this machine: a head (the
driver's node, no resources for rollouts or engines) and a worker node offering both. An async
run with two replicas trains to the end, both replicas serve rollouts, every rollout carries a
version the trainer had published (within the staleness bound), and the engine/trainer logprob
agreement is that of the one-engine run. One replica's process is killed after step 1: it is
replaced (the replacement takes the newest weights and serves again), and the run trains every
stream slot once."""

from __future__ import annotations

import json
import threading
import time
from functools import partial
from pathlib import Path

import pytest

from posttrain.config import RunConfig
from tests.dispatch.ray_nodes import free_port, wait_for
from tests.engine.service.replica_cluster import head_and_engine_node, replica_run_config, rollout_held_while

ray = pytest.importorskip("ray", reason="the ray extra is not installed (make setup installs it)")

STEPS = 12


def test_jobs_are_routed_round_robin_and_travel_by_name():
    import pickle

    from posttrain.engine.service.replicas import ReplicaClient

    client = ReplicaClient(["a-0", "a-1"], "ns")
    assert [client.for_job(n).preferred for n in range(5)] == [0, 1, 0, 1, 0]
    shipped = pickle.loads(pickle.dumps(client.for_job(3).with_cancel(lambda: False, RuntimeError)))
    assert (shipped.names, shipped.namespace, shipped.preferred, shipped.served_by) == (["a-0", "a-1"], "ns", 1, "")


def test_replicas_need_the_ray_executor():
    with pytest.raises(ValueError, match=r'engine.replicas = 2 needs dispatch.executor = "ray"'):
        RunConfig.model_validate(
            {
                "model": {"name": "tiny-llama"},
                "domains": [{"name": "a", "source": "x.jsonl"}],
                "engine": {"replicas": 2},
            }
        )


@pytest.mark.slow
def test_an_async_run_on_two_engine_replicas(tmp_path, tiny_config, monkeypatch):
    from posttrain.pipeline.bench import train_one

    out = tmp_path / "run"
    metrics_port = free_port()
    exporter = {"env": {"RAY_metrics_report_interval_ms": "1000"}, "metrics_export_port": metrics_port}
    with head_and_engine_node(monkeypatch, **exporter) as engine_node:
        config = replica_run_config(tiny_config, STEPS, engine="replicas = 2\n")
        metrics = out / "metrics.jsonl"

        back: dict = {}
        replacing = tmp_path / "replacing"  # while it exists, finished rollouts wait (see rollout_held_while)

        def steps_done() -> int:
            return len(metrics.read_text().splitlines()) if metrics.is_file() else 0

        def kill_replica_0_and_wait_for_its_replacement():
            wait_for(lambda: steps_done() >= 1, "one step")
            (name,) = [a["name"] for a in ray.util.list_named_actors(all_namespaces=True) if a["name"].endswith("-0")]
            namespace = ray.get_runtime_context().namespace
            replica = ray.get_actor(name, namespace=namespace)
            old = ray.get(replica.address.remote())
            ray.kill(replica, no_restart=True)
            killed = time.monotonic()

            def started() -> bool:  # the driver starts the replacement at a weight update after the kill
                try:
                    return ray.get_actor(name, namespace=namespace)._actor_id != replica._actor_id
                except ValueError:
                    return False

            wait_for(started, "the driver starts a replacement")
            replacing.touch()  # from here on the run waits while the replacement loads its model

            def replaced() -> bool:
                try:
                    return ray.get(ray.get_actor(name, namespace=namespace).address.remote(), timeout=1) != old
                except (ValueError, ray.exceptions.RayError):
                    return False

            try:
                wait_for(replaced, "a replacement answers")
                back.update(step=steps_done(), after_s=time.monotonic() - killed)
            finally:
                replacing.unlink(missing_ok=True)

        chaos = threading.Thread(target=kill_replica_0_and_wait_for_its_replacement, daemon=True)
        chaos.start()
        # each rollout also waits 1 s, as an episode waits on its sandbox, and holds while the replacement starts
        summary = train_one(config, out, partial(rollout_held_while, gate=str(replacing)))
        chaos.join(timeout=60)
        exported = _scrape_until(metrics_port, "posttrain_worker_jobs")

    assert summary["steps"] == STEPS and summary["pipeline"]["dispatch"]["failed"] == 0
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    trained = sorted(slot for r in records for slot in r["stream_slots"])
    assert trained == sorted(f"{step}:{slot}" for step in range(1, STEPS + 1) for slot in range(3)), trained
    assert records[-1]["engine_replicas_replaced"] == 1, records[-1]
    served = [engine for r in records for engine in r["rollout_engines"]]
    assert len(served) == STEPS * 3
    assert {s.split("@")[0] for s in served} == {"0", "1"}, served  # both replicas generated rollouts
    assert all(s.split("@")[1] == engine_node for s in served), served  # on the node that offers them
    eta = records[0]["max_staleness"]
    for r in records:
        if r["engine_replicas_replaced"] == 0 or r is records[-1]:  # a replacement catches up once placed
            assert r["engine_replica_versions"] == [r["step"]] * 2, r  # every replica holds what was published
        assert 0 <= r["staleness_max"] <= eta, r  # generated by a version the trainer had published
    # the replacement serves the jobs admitted after it answered (2 + eta steps later at most)
    assert back and back["step"] <= STEPS - 4, back
    late = [s for r in records if r["step"] > back["step"] + 2 + eta for s in r["rollout_engines"]]
    assert any(s.startswith("0@") for s in late), (back, late)
    rows = _stored_versions(out)
    assert rows and all(0 <= version < step for step, version in rows), rows
    # gap-0 samples: a replica's logprobs are the trainer's, as the driver's engine gives them
    # the rollout workers' own metrics, on their node's Ray exporter
    assert "posttrain_worker_jobs" in exported and "posttrain_worker_job_seconds" in exported, exported[-2000:]
    fresh = [r["logprob_mismatch_max"] for r in records if r["staleness_max"] == 0 and "logprob_mismatch_max" in r]
    assert fresh and max(fresh) < 1e-4, fresh


def _stored_versions(run_dir: Path) -> list[tuple[int, int]]:
    import sqlite3

    with sqlite3.connect(run_dir / "trajectories.sqlite") as db:
        return db.execute("SELECT step, policy_version FROM trajectories WHERE phase = 'train'").fetchall()


def _scrape_until(port: int, name: str, timeout: float = 20.0) -> str:
    import urllib.request

    deadline, text = time.monotonic() + timeout, ""
    while time.monotonic() < deadline:
        try:
            text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read().decode()
        except OSError:
            text = ""
        if name in text:
            break
        time.sleep(1)
    return text
