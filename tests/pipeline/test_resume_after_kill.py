"""`posttrain train --resume` after SIGKILL at several moments: no step repeated, no item
skipped, compared with an uninterrupted run of the same config."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

CLI = [sys.executable, "-m", "posttrain.cli"]


def start(args: list[str]) -> subprocess.Popen:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.Popen(CLI + args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen) -> None:
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err


def metrics(run: Path) -> list[dict]:
    path = run / "metrics.jsonl"
    if not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:  # torn last line of a killed writer
            pass
    return rows


def kill_when(proc: subprocess.Popen, run: Path, records: int, extra_delay: float) -> None:
    deadline = time.time() + 300
    while len(metrics(run)) < records:
        assert proc.poll() is None, "run ended before the kill point"
        assert time.time() < deadline
        time.sleep(0.02)
    time.sleep(extra_delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def trained_items(run: Path) -> list[tuple[int, str]]:
    db = sqlite3.connect(run / "trajectories.sqlite")
    return sorted(db.execute("SELECT step, task_id FROM trajectories WHERE phase = 'train'").fetchall())


@pytest.mark.slow
def test_sigkill_at_several_points_then_resume_matches_uninterrupted(tmp_path, tiny_config):
    config = tiny_config(steps=9, checkpoint_every=2)
    straight, killed = tmp_path / "straight", tmp_path / "killed"
    finish(start(["train", str(config), "--out", str(straight)]))

    proc = start(["train", str(config), "--out", str(killed)])
    kill_when(proc, killed, records=1, extra_delay=0.0)  # mid step 2, before any checkpoint
    for records, delay in [(4, 0.05), (7, 0.15)]:  # after checkpoints, mid-step / mid-checkpoint
        proc = start(["train", "--resume", "--out", str(killed)])
        kill_when(proc, killed, records=records, extra_delay=delay)
    finish(start(["train", "--resume", "--out", str(killed)]))

    expected, got = metrics(straight), metrics(killed)
    assert [r["step"] for r in got] == list(range(1, 10))  # each step exactly once
    assert [r["task_ids"] for r in got] == [r["task_ids"] for r in expected]
    assert trained_items(killed) == trained_items(straight)
    assert not [p for p in (killed / "checkpoints").iterdir() if p.name.startswith(".tmp")]
    summary = json.loads((killed / "summary.json").read_text())
    assert summary["steps"] == 9 and summary["resumed"] is True
