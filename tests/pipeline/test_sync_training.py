import json
import sqlite3

import pytest

from posttrain.errors import PosttrainError
from posttrain.pipeline.driver import train


def test_training_run_writes_the_run_directory(tmp_path, tiny_config):
    out = tmp_path / "run"
    summary = train(tiny_config(steps=3, checkpoint_every=2), out)
    assert {"config.toml", "metrics.jsonl", "trajectories.sqlite", "summary.json", "checkpoints"} <= {
        p.name for p in out.iterdir()
    }
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == ["step-2", "step-3"]
    assert (out / "checkpoints" / "step-3" / "model.safetensors").is_file()
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [1, 2, 3]
    for r in records:
        for key in (
            "reward_mean",
            "loss",
            "kl",
            "clip_fraction",
            "entropy",
            "grad_norm",
            "tokens_per_s",
            "step_s",
            "logprob_mismatch_max",
        ):
            assert key in r, key
        sampled = {task_id.split("/")[0] for task_id in r["task_ids"]}
        assert {k.removeprefix("reward/") for k in r if k.startswith("reward/")} == sampled
        assert r["logprob_mismatch_max"] < 1e-4
    rows = (
        sqlite3.connect(out / "trajectories.sqlite")
        .execute("SELECT COUNT(*), MIN(step), MAX(step) FROM trajectories")
        .fetchone()
    )
    assert rows == (3 * 3 * 2, 1, 3)
    assert summary["n_heldout"] == 8 and summary["steps"] == 3
    assert summary["delta_ci95"][0] <= summary["delta"] <= summary["delta_ci95"][1]
    assert json.loads((out / "summary.json").read_text())["eval_before"]["per_domain"].keys() == {"add", "count"}
    assert "[[domains]]" in (out / "config.toml").read_text()


def test_refuses_to_overwrite_a_run(tmp_path, tiny_config):
    config = tiny_config(steps=1)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "metrics.jsonl").write_text("")
    with pytest.raises(PosttrainError, match="not empty; use --resume"):
        train(config, tmp_path / "run")


def test_resume_needs_a_run_directory(tmp_path):
    with pytest.raises(PosttrainError, match="nothing to resume"):
        train(None, tmp_path / "absent", resume=True)
