"""`posttrain serve`: bad input gives one error line, a port in use too, before any model
loads; the model argument and the bench subcommand share the command; bench's renamed flags
keep their old spellings with a warning line."""

import socket
import time
from pathlib import Path

import pytest

from tests.cli.test_cli_errors import one_error_line, run_cli


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
    ],
)
def test_bad_input_is_one_error_line(args, expected):
    assert expected in one_error_line(run_cli(*args))


def test_help_names_the_server_and_the_benchmark():
    result = run_cli("serve", "--help")
    assert result.returncode == 0 and "bench" in result.stdout and "run" in result.stdout
    run_help = run_cli("serve", "run", "--help")
    assert run_help.returncode == 0 and "--compile" in run_help.stdout and "torch.compile" in run_help.stdout


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
