import json
import subprocess
import sys

import pytest

CLI = [sys.executable, "-m", "posttrain.cli", "sandbox"]


@pytest.fixture(autouse=True)
def _needs_bwrap(make_sandbox):
    """Skips with the reason when bubblewrap or root is missing (via make_sandbox)."""


def run(*args, timeout=120):
    return subprocess.run(CLI + list(args), capture_output=True, text=True, timeout=timeout)


def test_run_streams_output_and_returns_the_exit_code(tmp_path):
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "in.txt").write_text("from host")
    result = run("run", "--workspace", str(tmp_path / "w"), "--", "sh", "-c", "cat in.txt; echo; exit 7")
    assert result.returncode == 7
    assert result.stdout == "from host\n"


def test_run_reports_limit_kills_on_stderr():
    timed = run("run", "--timeout", "1", "--", "sleep", "30")
    assert timed.returncode == 124 and "killed after the 1 s time limit" in timed.stderr
    oom = run("run", "--memory", "32", "--", "python3", "-c", "x = bytearray(1 << 30)")
    assert oom.returncode == 137 and "out of memory (limit 32 MB)" in oom.stderr


def test_bad_limit_is_one_clear_line():
    result = run("run", "--pids", "1", "--", "true")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == ["error: --pids: Input should be greater than or equal to 4"]


def test_bench_prints_the_json_shape(tmp_path):
    out = tmp_path / "bench.json"
    result = run("bench", "--iterations", "5", "--max-idle", "20", "--out", str(out), timeout=300)
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text())
    assert json.loads(result.stdout) == report
    for key in ("create_exec_close_ms", "subprocess_ms", "pool_handout_ms"):
        assert report[key]["p50"] > 0
    assert set(report["snapshot_restore_ms"]) == {"1MB", "200MB"}
    assert report["max_idle_sandboxes"] == 20
