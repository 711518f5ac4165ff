"""`posttrain eval` on a suite with broken tasks (listed, counted, the rest evaluated; --strict
stops) and under Ctrl-C or SIGTERM (the saved attempts are counted, a re-run says it resumes;
exit 130 and 143)."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import sigint_as_in_a_terminal
from tests.sandbox.conftest import BWRAP_MISSING

ROOT = Path(__file__).resolve().parents[2]
HELLO = ROOT / "tasks" / "terminal" / "hello-file"
pytestmark = pytest.mark.skipif(bool(BWRAP_MISSING), reason=str(BWRAP_MISSING))


def posttrain(*args, timeout=300):
    return subprocess.run(
        [sys.executable, "-m", "posttrain.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env={**os.environ, "OMP_NUM_THREADS": "1", "COLUMNS": "200"},
    )


@pytest.fixture
def mixed_suite(tmp_path):
    """Two good tasks, one without tests/test.sh, one whose task.toml misspells a key."""
    suite = tmp_path / "suite"
    shutil.copytree(HELLO, suite / "good-a")
    shutil.copytree(HELLO, suite / "good-b")
    shutil.copytree(HELLO, suite / "no-tests")
    (suite / "no-tests" / "tests" / "test.sh").unlink()
    shutil.copytree(HELLO, suite / "typo")
    toml = suite / "typo" / "task.toml"
    toml.write_text(toml.read_text().replace("memory_mb", "memroy_mb"))
    return suite


def test_invalid_tasks_are_listed_counted_and_the_rest_evaluated(tmp_path, mixed_suite):
    result = posttrain("eval", "--tasks", mixed_suite, "--agent", "oracle", "--out", tmp_path / "out")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "invalid: no-tests: " in result.stderr and "tests/test.sh: missing" in result.stderr
    assert "1 task directory is invalid and will not run; evaluating the other 3" in result.stderr
    assert "typo/task.toml: unknown key environment.memroy_mb (did you mean memory_mb?)" in result.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["n_tasks"] == 3 and summary["pass_at_1"] == 1.0
    assert summary["invalid"] == 1 and summary["invalid_tasks"][0]["task"] == "no-tests"
    assert "## Invalid tasks (1, not run)" in (tmp_path / "out" / "report.md").read_text()


def test_strict_stops_at_an_invalid_task_and_runs_nothing(tmp_path, mixed_suite):
    result = posttrain("eval", "--tasks", mixed_suite, "--agent", "oracle", "--out", tmp_path / "out", "--strict")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "error: " in result.stderr and "tests/test.sh: missing" in result.stderr
    assert not (tmp_path / "out" / "results.jsonl").exists()


@pytest.mark.parametrize(
    "stop, code, said",
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated (SIGTERM)")],
    ids=["ctrl-c", "sigterm"],
)
def test_a_stop_says_what_was_saved_and_a_rerun_says_it_resumes(tmp_path, stop, code, said):
    suite = tmp_path / "suite"
    for i in range(6):  # each reference solution takes a second: the signal lands mid-run
        shutil.copytree(HELLO, suite / f"slow-{i}")
        solve = suite / f"slow-{i}" / "solution" / "solve.sh"
        solve.write_text(solve.read_text() + "sleep 1\n")
    args = ["eval", "--tasks", suite, "--agent", "oracle", "--concurrency", "1", "--out", tmp_path / "out"]
    process = subprocess.Popen(
        [sys.executable, "-m", "posttrain.cli", *map(str, args)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1", "COLUMNS": "200"},
        preexec_fn=sigint_as_in_a_terminal,
    )
    results = tmp_path / "out" / "results.jsonl"
    deadline = time.monotonic() + 120
    while not (results.is_file() and results.read_text().strip()) and time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()[1]
        time.sleep(0.05)
    process.send_signal(stop)
    _, err = process.communicate(timeout=60)
    assert process.returncode == code, err[-2000:]
    saved = len(results.read_text().splitlines())
    assert 1 <= saved < 6
    assert f"{said}: {saved}/6 attempts saved; run the same command to resume" in err
    assert "Traceback" not in err
    again = posttrain(*args)
    assert again.returncode == 0, again.stderr[-2000:]
    assert f"resuming: {saved}/6 attempts done in {tmp_path / 'out'}; running the other {6 - saved}" in again.stderr
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["n_attempts"] == 6


def test_help_says_why_k_defaults_differ_between_eval_and_inspect():
    eval_help = " ".join(posttrain("eval", "--help").stdout.split())
    inspect_help = " ".join(posttrain("inspect", "--help").stdout.split())
    assert "1: pass@1, greedy" in eval_help and "inspect's -k is 4" in eval_help
    assert "4, where eval's -k is 1 (pass@1)" in inspect_help and "cannot be judged from one sample" in inspect_help
