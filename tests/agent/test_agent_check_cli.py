"""`posttrain agent check`: the oracle passes and doing nothing fails a real task, with the
task directory given as --tasks (as posttrain eval spells it) or as the argument."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.sandbox.conftest import BWRAP_MISSING

ROOT = Path(__file__).resolve().parents[2]
HELLO = ROOT / "tasks" / "terminal" / "hello-file"
pytestmark = pytest.mark.skipif(bool(BWRAP_MISSING), reason=str(BWRAP_MISSING))


def check(*args):
    return subprocess.run(
        [sys.executable, "-m", "posttrain.cli", "agent", "check", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, "OMP_NUM_THREADS": "1", "COLUMNS": "200"},
    )


@pytest.mark.parametrize("given", [["--tasks", HELLO], [HELLO]], ids=["option", "argument"])
def test_the_task_directory_as_option_or_argument(given):
    result = check(*given)
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(result.stdout)
    assert report["oracle_failed"] == [] and report["nop_passed_tasks"] == []
