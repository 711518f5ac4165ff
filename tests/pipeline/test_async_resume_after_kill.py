"""Lossless resume of an async run: SIGKILL a real `posttrain train` process during generation,
during a training step and during a checkpoint write, `--resume` each time, and compare what
was trained with an uninterrupted run: every stream slot trained exactly once, the same tasks,
in-flight rollouts re-queued and buffered ones restored from the checkpoint."""

import json
import os
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

CLI = [sys.executable, "-m", "posttrain.cli"]


def run(args: list[str], fault: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    env.pop("POSTTRAIN_FAULTS", None)
    if fault:
        env["POSTTRAIN_FAULTS"] = fault
    return subprocess.run(CLI + args, env=env, capture_output=True, text=True, timeout=600)


def records(run_dir: Path) -> list[dict]:
    out = []
    for line in (run_dir / "metrics.jsonl").read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            pass
    return out


def slot_tasks(run_dir: Path) -> list[tuple[str, str]]:
    return sorted((s, t) for r in records(run_dir) for s, t in zip(r["stream_slots"], r["task_ids"]))


def trained_rows(run_dir: Path) -> Counter:
    db = sqlite3.connect(run_dir / "trajectories.sqlite")
    return Counter(db.execute("SELECT task_id, sample_index FROM trajectories WHERE phase = 'train'").fetchall())


def killed(result: subprocess.CompletedProcess) -> bool:
    return result.returncode == -9


@pytest.mark.slow
def test_async_run_killed_at_three_points_resumes_losslessly(tmp_path, tiny_config):
    config = tiny_config(steps=8, checkpoint_every=2)
    config.write_text('mode = "async"\n' + config.read_text() + "\n[async]\nmax_staleness = 1\n")
    straight, victim = tmp_path / "straight", tmp_path / "killed"
    done = run(["train", str(config), "--out", str(straight)])
    assert done.returncode == 0, done.stderr

    # 1. during generation: the engine holds version 3 (checkpoint 2 exists, step 3 is not saved)
    assert killed(run(["train", str(config), "--out", str(victim)], "die:generation-v3@2"))
    assert [r["step"] for r in records(victim)] == [1, 2, 3]
    # 2. during a training step: resumed from step 2, killed inside step 5 (checkpoint 4 exists)
    assert killed(run(["train", "--resume", "--out", str(victim)], "die:train_step@3"))
    assert [r["step"] for r in records(victim)] == [1, 2, 3, 4]
    assert sorted(p.name for p in (victim / "checkpoints").iterdir()) == ["step-2", "step-4"]
    # 3. while writing checkpoint 6: its files are in the temp directory, not yet renamed
    assert killed(run(["train", "--resume", "--out", str(victim)], "die:checkpoint_write@1"))
    assert (victim / "checkpoints" / ".tmp-step-6").is_dir()
    finished = run(["train", "--resume", "--out", str(victim)])
    assert finished.returncode == 0, finished.stderr

    got = records(victim)
    assert [r["step"] for r in got] == list(range(1, 9))  # each step exactly once
    assert slot_tasks(victim) == slot_tasks(straight)  # the same tasks, each slot once
    assert len({s for s, _ in slot_tasks(victim)}) == 8 * 3
    assert trained_rows(victim) == trained_rows(straight)  # each sample stored once
    assert all(r["staleness_max"] <= 1 for r in got)
    # checkpoints 2 and 4 each held the 6 admitted, untrained slots of the next two steps (eta = 1):
    # the resume from 2 and the two from 4 brought 6 back each, in flight (re-queued) or buffered;
    # the counters travel with the checkpoint, so the last session counts 6 (from 4's) + 6
    last = got[-1]
    assert last["requeued_on_resume"] + last["restored_buffered"] == 12 and last["requeued_on_resume"] > 0
    assert not [p for p in (victim / "checkpoints").iterdir() if p.name.startswith(".tmp")]
    summary = json.loads((victim / "summary.json").read_text())
    assert summary["steps"] == 8 and summary["resumed"] is True
