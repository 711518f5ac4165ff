"""The benchmark scripts as modules: benchmarks/ is a folder of scripts, not a package."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def script_path(name: str) -> Path:
    return BENCHMARKS / f"{name}.py"


def load_script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, script_path(name))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_script(name: str, args: list[str], out: Path) -> dict:
    """Run a benchmark in its own process on one thread with `--out out`; returns the JSON it
    printed, checked to be the only thing on stdout and the same as the file it wrote."""
    proc = subprocess.run(
        [sys.executable, str(script_path(name)), *args, "--out", str(out)],
        capture_output=True,
        text=True,
        env=dict(os.environ, OMP_NUM_THREADS="1"),
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    assert report == json.loads(out.read_text())
    return report
