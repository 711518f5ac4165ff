"""Ctrl-C in `posttrain train` says what a resume starts from; the resume says it resumes."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import sigint_as_in_a_terminal

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "posttrain.cli"]
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "COLUMNS": "200"}


def test_ctrl_c_names_the_checkpoint_and_the_resume_starts_there(tmp_path, tiny_config):
    config, out = tiny_config(steps=8, checkpoint_every=2), tmp_path / "run"
    process = subprocess.Popen(
        CLI + ["train", str(config), "--out", str(out)],
        cwd=ROOT,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_as_in_a_terminal,
    )
    metrics = out / "metrics.jsonl"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()[1][-2000:]
        if metrics.is_file() and len(metrics.read_text().splitlines()) >= 3:
            break
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err[-2000:]
    line = next(x for x in err.splitlines() if x.startswith("interrupted: "))
    assert line.endswith(f"; continue with: posttrain train --resume --out {out}")
    assert "checkpoint at step 2 saved" in line or "checkpoint at step 4 saved" in line, line
    step = int(line.split("checkpoint at step ")[1].split()[0])
    resumed = subprocess.run(
        CLI + ["train", "--resume", "--out", str(out)], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=600
    )
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert f"run directory: {out} (resumed)" in resumed.stderr
    assert f"resuming: from the checkpoint at step {step} of 8" in resumed.stderr
    assert json.loads((out / "summary.json").read_text())["steps"] == 8
