"""The suite's `python -m posttrain.cli` processes are forked from a preloaded interpreter
(tests/forked_cli.py): they must behave as fresh ones do to the tests that start them: output,
exit codes, the environment and working directory given, signals and kill -9."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from posttrain.dispatch.local_cluster import free_port
from tests.forked_cli import ForkingPopen, _RealPopen, close_zygote, enabled

CLI = [sys.executable, "-m", "posttrain.cli"]
pytestmark = pytest.mark.skipif(not enabled(), reason="POSTTRAIN_TEST_FORK_CLI=0 or not Linux")


def parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def fresh_run(args: list[str], **options) -> subprocess.CompletedProcess:
    """The same command in a freshly started interpreter."""
    with _RealPopen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **options) as process:
        out, err = process.communicate(timeout=300)
    return subprocess.CompletedProcess(args, process.returncode, out, err)


def test_a_cli_command_runs_forked_with_its_output_exit_code_cwd_and_environment(tmp_path):
    outputs = {}
    for columns in ("60", "200"):  # click wraps the help to the command's own COLUMNS
        env = {**os.environ, "COLUMNS": columns}
        with subprocess.Popen(
            [*CLI, "train", "--help"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env
        ) as process:
            assert isinstance(process, ForkingPopen) and process._zygote is not None
            assert parent_of(process.pid) == process._zygote.process.pid  # forked, not started afresh
            out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        assert out == fresh_run([*CLI, "train", "--help"], cwd=tmp_path, env=env).stdout
        outputs[columns] = out
    assert outputs["60"] != outputs["200"] and "Usage: python -m posttrain.cli train" in outputs["60"]

    # a relative path is resolved in the command's cwd; bad input: exit 2, one error line
    bad = subprocess.run(
        [*CLI, "train", "missing.toml", "--check"], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert bad.returncode == 2
    assert "missing.toml" in bad.stderr and "Traceback" not in bad.stderr
    fresh = fresh_run([*CLI, "train", "missing.toml", "--check"], cwd=tmp_path)
    assert (bad.returncode, bad.stdout, bad.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr)

    # output to a file the test opened, as subprocess passes it
    with open(tmp_path / "help.txt", "w") as sink:
        assert subprocess.run([*CLI, "sandbox", "--help"], stdout=sink, timeout=120).returncode == 0
    assert "bubblewrap" in (tmp_path / "help.txt").read_text()


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_signals_reach_the_forked_process_itself(tmp_path, sig):
    (tmp_path / "metrics.jsonl").write_text("")  # a run directory, still empty
    port = free_port()
    process = subprocess.Popen(
        [*CLI, "dashboard", str(tmp_path), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # serving: the CLI is really running
        assert process.poll() is None, process.communicate()[1][-2000:]
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    else:
        pytest.fail("the dashboard never listened")
    process.send_signal(sig)
    process.communicate(timeout=60)
    if sig == signal.SIGKILL:
        assert process.returncode == -signal.SIGKILL
    else:
        assert process.returncode in (-signal.SIGTERM, 0, 1, 143)
    assert not Path(f"/proc/{process.pid}").exists()  # reaped: gone when wait() returns


def test_a_command_with_a_different_import_time_environment_gets_its_own_zygote():
    other = {**os.environ, "TOKENIZERS_PARALLELISM": "true"}  # read when tokenizers is imported
    try:
        first = subprocess.Popen([*CLI, "--help"], stdout=subprocess.DEVNULL, env=other)
        second = subprocess.Popen([*CLI, "--help"], stdout=subprocess.DEVNULL)
        assert first.wait(timeout=120) == 0 and second.wait(timeout=120) == 0
        assert first._zygote is not None and second._zygote is not None
        assert first._zygote is not second._zygote
    finally:
        close_zygote(other)
    plain = subprocess.Popen([sys.executable, "-c", "print(1)"], stdout=subprocess.PIPE)
    assert plain._zygote is None and plain.communicate(timeout=60)[0] == b"1\n"
