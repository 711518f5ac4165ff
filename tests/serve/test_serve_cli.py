"""`posttrain serve`: bad input gives one error line, a port in use too, before any model
loads; the model argument and the bench subcommand share the command; bench's renamed flags
keep their old spellings with a warning line."""

import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.cli.test_cli_errors import CLI, one_error_line, run_cli


@pytest.mark.parametrize(
    "args, expected",
    [
        (["serve", "tiny-llama", "--variant", "turbo"], "--variant must be one of standard, fast, not 'turbo'"),
        (["serve", "bench", "--concurrency-levels", "1,x"], "--concurrency-levels: expected comma-separated integers"),
        (["serve", "bench", "--workloads", "agent,poetry"], "workloads: expected some of agent, chat"),
        (["serve", "bench", "--vllm", "maybe"], "--vllm must be one of auto, on, off, not 'maybe'"),
        (["serve", "bench", "--requests-per-client", "0"], "--requests-per-client"),
        (["serve", "bench", "--server-cpus", "0,x"], "--server-cpus: expected comma-separated CPU ids"),
        (["serve", "bench", "--server-cpus", "4096"], "--server-cpus: [4096] not among this machine's CPUs"),
        (["serve", "smollm2-135m", "--engine", "vllm"], "--engine vllm: vLLM is not installed in this environment"),
        (
            ["serve", "smollm2-135m", "--engine", "vllm", "--variant", "fast", "--quantize", "int8"],
            "--quantize is the builtin engine's",
        ),
        (
            ["serve", "tiny-llama", "--quantize", "int8"],
            "--quantize int8 is part of the fast variant: add --variant fast",
        ),
        (
            ["serve", "tiny-llama", "--variant", "fast", "--quantize", "int4"],
            "--quantize must be one of int8, not 'int4'",
        ),
        (["serve", "tiny-llama", "--kv-cache-dtype", "int4"], "--kv-cache-dtype must be one of auto, fp32, int8"),
        (
            ["serve", "tiny-llama", "--kv-cache-dtype", "int8", "--compile"],
            "--kv-cache-dtype int8 is the builtin engine's eager step: not with --engine vllm or --compile",
        ),
    ],
)
def test_bad_input_is_one_error_line(args, expected):
    assert expected in one_error_line(run_cli(*args))


@pytest.mark.parametrize(
    "content, expected",
    [
        (None, "no such file"),
        ("", "holds no key"),
        ("# rotated out\n\n", "holds no key"),
        ("two words\n", "line 1: a key cannot contain spaces"),
    ],
)
def test_a_bad_api_key_file_is_one_error_line_naming_it_before_the_model_loads(tmp_path, content, expected):
    path = tmp_path / "keys.txt"
    if content is not None:
        path.write_text(content)
    line = one_error_line(run_cli("serve", str(tmp_path / "no-model-here"), "--api-key-file", str(path)))
    assert line == f"error: --api-key-file {path}: {expected}" or (expected in line and str(path) in line)
    assert "no-model-here" not in line


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--rate-limit", "10/hour"], "--rate-limit: expected N/s or N/min with N >= 1 (e.g. 60/min), got '10/hour'"),
        (["--api-key", ""], "--api-key: a key cannot be empty"),
    ],
)
def test_bad_guard_flags_are_one_error_line_before_the_model_loads(tmp_path, args, expected):
    line = one_error_line(run_cli("serve", str(tmp_path / "no-model-here"), *args))
    assert expected in line and "no-model-here" not in line


def test_listening_beyond_this_machine_without_a_key_is_one_warning_line(tmp_path):
    missing = str(tmp_path / "no-model-here")
    port = str(_free_port())
    result = run_cli("serve", missing, "--host", "0.0.0.0", "--port", port)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines[0] == (
        "warning: --host 0.0.0.0: listening beyond this machine without an API key; anyone who can reach "
        "the port can use the model (add --api-key or --api-key-file)"
    )
    assert len(lines) == 2 and lines[1].startswith("error: ") and "no-model-here" in lines[1]
    keyed = run_cli("serve", missing, "--host", "0.0.0.0", "--port", port, "--api-key", "k")
    assert "no-model-here" in one_error_line(keyed)  # no warning with a key
    env_keyed = subprocess.run(
        [*CLI, "serve", missing, "--host", "0.0.0.0", "--port", port],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "POSTTRAIN_API_KEY": "from-env"},
    )
    assert "no-model-here" in one_error_line(env_keyed)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _listening(port: int) -> set[str]:
    """The local addresses listening on `port`, read from /proc/net/tcp (IPv4, as hex)."""
    found = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, hex_port = local.split(":")
        if int(hex_port, 16) == port and state == "0A":
            found.add(socket.inet_ntoa(bytes.fromhex(address)[::-1]))
    return found


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads the listening sockets from /proc/net/tcp")
def test_the_server_listens_on_127_0_0_1_by_default():
    port = _free_port()
    process = subprocess.Popen(
        [*CLI, "serve", "tiny-llama", "--port", str(port)],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "COLUMNS": "200", "OMP_NUM_THREADS": "1"},
    )
    try:
        deadline = time.monotonic() + 120
        while not _listening(port) and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.2)
        assert _listening(port) == {"127.0.0.1"}
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=30)
    assert f"at http://127.0.0.1:{port}/v1 (no API key)" in stderr and "warning" not in stderr


def test_help_names_the_server_and_the_benchmark():
    result = run_cli("serve", "--help")
    assert result.returncode == 0 and "bench" in result.stdout and "run" in result.stdout
    run_help = run_cli("serve", "run", "--help")
    assert run_help.returncode == 0 and "--compile" in run_help.stdout and "torch.compile" in run_help.stdout
    assert "--kv-cache-dtype" in run_help.stdout and "quarter of the bytes" in " ".join(run_help.stdout.split())


@pytest.mark.skipif(Path(".venv-vllm/bin/vllm").exists(), reason="with .venv-vllm, --vllm on runs the benchmark")
def test_vllm_on_without_its_environment_fails_before_any_cell():
    assert "--vllm on: .venv-vllm/bin/vllm is missing" in one_error_line(run_cli("serve", "bench", "--vllm", "on"))


def test_a_port_in_use_is_one_error_line_before_the_model_loads(tmp_path):
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        started = time.monotonic()
        line = one_error_line(run_cli("serve", "tiny-llama", "--port", str(port)))
        assert line == (
            f"error: posttrain serve --port: cannot listen on 127.0.0.1:{port} (Address already in use); "
            "choose another port"
        )
        # a model that would not even load: the port is refused first, so nothing was loaded
        line = one_error_line(run_cli("serve", str(tmp_path / "no-model-here"), "--port", str(port)))
        assert f"127.0.0.1:{port}" in line and "no-model-here" not in line
        assert time.monotonic() - started < 60


def test_bench_old_spellings_work_with_one_warning_line():
    result = run_cli("serve", "bench", "--concurrency", "1,x", "--out", "x.json")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.splitlines() == [
        "warning: --out is deprecated here; write --output",
        "warning: --concurrency is deprecated here; write --concurrency-levels",
        "error: --concurrency-levels: expected comma-separated integers, got '1,x'",
    ]
    both = run_cli("serve", "bench", "--concurrency", "2", "--concurrency-levels", "2")
    assert "--concurrency and --concurrency-levels are one option: give --concurrency-levels" in one_error_line(both)
    help_text = run_cli("serve", "bench", "--help").stdout
    assert "--concurrency-levels" in help_text and "--output" in help_text
