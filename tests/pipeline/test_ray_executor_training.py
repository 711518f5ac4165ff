"""The same config on the `ray` executor (a local Ray cluster, ray.init()) and on `local`: in sync
mode both train the same task ids, and even the same tokens."""

import json
import sqlite3

import pytest

from posttrain.pipeline.driver import train

ray = pytest.importorskip("ray", reason="the ray extra is not installed (make setup installs it)")


def trained(run):
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    rows = (
        sqlite3.connect(run / "trajectories.sqlite")
        .execute(
            "SELECT step, task_id, sample_index, completion_token_ids, reward FROM trajectories "
            "WHERE phase = 'train' ORDER BY step, task_id, sample_index"
        )
        .fetchall()
    )
    return [r["task_ids"] for r in records], rows


@pytest.mark.slow
def test_ray_and_local_executors_train_the_same_task_ids(tmp_path, tiny_config):
    path = tiny_config(steps=3, checkpoint_every=3)
    base = path.read_text()
    path.write_text(base + '\n[dispatch]\nexecutor = "local"\nworkers = 2\n')
    local = train(path, tmp_path / "local")
    path.write_text(base + '\n[dispatch]\nexecutor = "ray"\nworkers = 2\ncpus_per_worker = 0.5\n')
    try:
        on_ray = train(path, tmp_path / "ray")
        status = json.loads((tmp_path / "ray" / "dispatch.json").read_text())
    finally:
        ray.shutdown()
    assert on_ray["pipeline"]["executor"] == "ray" and status["executor"]["kind"] == "ray"
    assert on_ray["pipeline"]["dispatch"]["completed"] == 3 * 3
    local_ids, local_rows = trained(tmp_path / "local")
    ray_ids, ray_rows = trained(tmp_path / "ray")
    assert ray_ids == local_ids and len(local_ids) == 3
    assert ray_rows == local_rows  # the engine is batch-invariant: the same tokens too
    assert local["eval_after"] == on_ray["eval_after"]
