"""A real 2-step training run of tiny-llama with the per-domain monitor and the metric sinks on
(TensorBoard, and W&B offline where it is installed), made once for the sink tests."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import write_tiny_config

ROOT = Path(__file__).resolve().parents[2]
SINKS = '["tensorboard", "wandb"]' if importlib.util.find_spec("wandb") else '["tensorboard"]'
SINK_CONFIG = f"\n[monitor]\nevery = 1\nitems = 4\n\n[logging]\nreport_to = {SINKS}\n"


@pytest.fixture(scope="session")
def sink_run(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("sinks")
    config = write_tiny_config(base, steps=2, checkpoint_every=2)
    config.write_text(config.read_text() + SINK_CONFIG)
    run = base / "run"
    done = subprocess.run(
        [sys.executable, "-m", "posttrain.cli", "train", str(config), "--out", str(run)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return run
