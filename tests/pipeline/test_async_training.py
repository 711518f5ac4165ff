"""mode = "async": generation overlaps training under the staleness bound, and the run trains
exactly the tasks the synchronous run trains."""

import json
import sqlite3
import tomllib

import pytest

from posttrain.config import load_config, parse_config
from posttrain.errors import ConfigError
from posttrain.pipeline.driver import train


def async_config(path, eta=1, extra=""):
    path.write_text(f'mode = "async"\n{path.read_text()}\n[async]\nmax_staleness = {eta}\n{extra}')
    return path


def records(run):
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


def slot_tasks(run):
    return sorted((s, t) for r in records(run) for s, t in zip(r["stream_slots"], r["task_ids"]))


def test_async_trains_every_stream_slot_once_within_the_bound(tmp_path, tiny_config):
    sync_path = tiny_config(steps=6, checkpoint_every=3)
    train(sync_path, tmp_path / "sync")
    summary = train(async_config(sync_path), tmp_path / "async")

    got = records(tmp_path / "async")
    assert [r["step"] for r in got] == list(range(1, 7))
    # the same tasks as the synchronous run, slot for slot, each trained exactly once
    assert slot_tasks(tmp_path / "async") == slot_tasks(tmp_path / "sync")
    gaps = [g for r in got for g in r["staleness"]]
    assert max(gaps) == 1 and min(gaps) >= 0  # overlap happened, never beyond eta
    assert all(r["staleness_max"] <= r["max_staleness"] == 1 for r in got)
    assert all(0.0 <= r["trainer_idle_frac"] <= 1.0 and 0.0 <= r["rollout_idle_frac"] <= 1.0 for r in got)
    assert all(max(r["staleness"]) == 0 for r in records(tmp_path / "sync"))  # sync is eta = 0
    rows = (
        sqlite3.connect(tmp_path / "async" / "trajectories.sqlite")
        .execute("SELECT step, policy_version FROM trajectories")
        .fetchall()
    )
    assert len(rows) == 6 * 3 * 2 and all(step - 1 - version <= 1 for step, version in rows)
    assert summary["pipeline"]["mode"] == "async" and summary["pipeline"]["dispatch"]["failed"] == 0
    status = json.loads((tmp_path / "async" / "dispatch.json").read_text())
    assert status["policy_version"] == 6 and status["in_flight"] == 0


def test_async_needs_the_builtin_engine_and_importance_correction(tmp_path, tiny_config):
    path = async_config(tiny_config(steps=1))
    path.write_text(path.read_text() + '\n[engine]\nbackend = "hf"\n')
    with pytest.raises(ConfigError, match=r"tiny.toml: \(top level\): mode = \"async\" needs engine.backend"):
        load_config(path)
    data = tomllib.loads(async_config(tiny_config(steps=1)).read_text())
    data["algorithm"]["tis_cap"] = None  # what `tis_cap = none` means from Python
    with pytest.raises(ConfigError, match="run.toml: .*needs the importance correction.*algorithm.tis_cap"):
        parse_config(data, "run.toml")
