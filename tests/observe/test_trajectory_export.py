"""`posttrain trajectories export`: every stored sample, as the store holds it, in JSONL and in
Parquet (read back with pyarrow); bad input is one error line naming the path."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from posttrain.observe.trajectory_store import TrajectoryStore

ROOT = Path(__file__).resolve().parents[2]


def posttrain(*args):
    return subprocess.run(
        [sys.executable, "-m", "posttrain.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "200"},
    )


def sample(i: int, advantage):
    return {
        "task_id": f"add/{i}",
        "domain": "add",
        "sample_index": i % 2,
        "policy_version": 3,
        "prompt_token_ids": [1, 2, 3],
        "completion_token_ids": list(range(i + 1)),
        "logprobs": [-0.5] * (i + 1),
        "text": f"answer {i}",
        "finish_reason": "stop",
        "reward": float(i % 2),
        "passed": bool(i % 2),
        "details": {"expected": str(i), "turns": [{"tool_calls": [{"name": "bash"}]}]},
        "advantage": advantage,
    }


@pytest.fixture
def run(tmp_path):
    store = TrajectoryStore(tmp_path / "trajectories.sqlite")
    store.add_groups(1, "train", [sample(i, 0.5) for i in range(3)])
    store.add_groups(2, "train", [sample(i, None) for i in range(3, 5)])  # no advantage stored
    store.close()
    return tmp_path


def test_jsonl_and_parquet_hold_every_sample_as_stored(run, tmp_path):
    done = posttrain("trajectories", "export", run)
    assert done.returncode == 0, done.stderr
    assert "exported 5 samples" in done.stderr
    rows = [json.loads(line) for line in (run / "trajectories.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == [1, 2, 3, 4, 5] and [r["step"] for r in rows] == [1, 1, 1, 2, 2]
    for row, index in zip(rows, range(5), strict=True):
        expected = sample(index, 0.5 if index < 3 else None)
        assert {k: row[k] for k in expected} == expected

    pq = pytest.importorskip("pyarrow.parquet")
    done = posttrain("trajectories", "export", run, "--format", "parquet", "--output", tmp_path / "x" / "all.parquet")
    assert done.returncode == 0, done.stderr
    table = pq.read_table(tmp_path / "x" / "all.parquet").to_pylist()
    assert [{**r, "details": json.loads(r["details"])} for r in table] == rows


def test_the_old_out_spelling_still_writes_the_file_with_a_warning(run, tmp_path):
    done = posttrain("trajectories", "export", run, "--out", tmp_path / "old.jsonl")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[0] == "warning: --out is deprecated here; write --output"
    assert len((tmp_path / "old.jsonl").read_text().splitlines()) == 5


def test_bad_input_is_one_line_naming_the_path(tmp_path):
    missing = posttrain("trajectories", "export", tmp_path)
    assert missing.returncode == 2 and missing.stderr.strip() == (
        f"error: {tmp_path}: no trajectories.sqlite (not a training run directory)"
    )
    TrajectoryStore(tmp_path / "trajectories.sqlite").close()
    wrong = posttrain("trajectories", "export", tmp_path, "--format", "csv")
    assert wrong.returncode == 2 and "unknown format 'csv'; choose one of jsonl, parquet" in wrong.stderr
    assert not list(tmp_path.glob("*.partial")) and not (tmp_path / "trajectories.csv").exists()
