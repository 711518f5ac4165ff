"""Bad input gives one clear error line on stderr, exit code 2, and no traceback."""

import os
import subprocess
import sys

import pytest

CLI = [sys.executable, "-m", "posttrain.cli"]


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        CLI + list(args), capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "200"}
    )


def one_error_line(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


GOOD = '[model]\nname = "tiny-llama"\n[[domains]]\nname = "a"\nsource = "reasoning-gym:basic_arithmetic"\nheldout = 2\n'


@pytest.mark.parametrize(
    "text, expected",
    [
        (GOOD + "[optim]\nlr = -1\n", "optim.lr: Input should be greater than 0"),
        (GOOD + "[train]\nstepz = 3\n", "train.stepz: unknown key"),
        (GOOD.replace("basic_arithmetic", "no_such_generator"), "unknown reasoning-gym generator 'no_such_generator'"),
        (GOOD.replace("basic_arithmetic", "basic_arithmetc"), "'basic_arithmetc' (did you mean basic_arithmetic?)"),
        (GOOD + "[optim]\nlearning_rate = 1e-5\n", "optim.learning_rate: unknown key (did you mean lr?)"),
        (GOOD.replace('"tiny-llama"', '"/nonexistent/model"'), "model '/nonexistent/model': no config.json"),
        (GOOD.replace("reasoning-gym:basic_arithmetic", "jsonl:missing.jsonl"), "missing.jsonl does not exist"),
        (GOOD + '[train]\ndevice = "cuda"\n', 'train.device = "cuda": the builtin engine runs on the CPU only'),
        (
            GOOD + '[engine]\nkv_cache_dtype = "int4"\n',
            "engine.kv_cache_dtype: Input should be 'auto', 'fp32' or 'int8'",
        ),
    ],
)
def test_bad_input_is_one_clear_line(tmp_path, text, expected):
    config = tmp_path / "bad.toml"
    config.write_text(text)
    line = one_error_line(run_cli("train", str(config), "--out", str(tmp_path / "run")))
    assert expected in line


def test_cuda_on_a_machine_without_a_gpu_is_one_line_naming_the_key(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    config = tmp_path / "cuda.toml"
    config.write_text(GOOD + '[engine]\nbackend = "hf"\n[train]\ndevice = "cuda"\n')
    line = one_error_line(run_cli("train", str(config), "--out", str(tmp_path / "run")))
    assert 'train.device = "cuda": torch sees no CUDA GPU' in line and 'set device = "cpu"' in line


def test_missing_config_file(tmp_path):
    line = one_error_line(run_cli("train", str(tmp_path / "nope.toml"), "--out", str(tmp_path / "run")))
    assert "nope.toml: config file not found" in line


def test_help_explains_train():
    result = run_cli("train", "--help")
    assert result.returncode == 0
    assert "--resume" in result.stdout and "summary.json" in result.stdout


def test_every_config_error_is_listed_one_a_line(tmp_path):
    config = tmp_path / "bad.toml"
    config.write_text(GOOD + "[optim]\nlr = -1\n[train]\nstepz = 3\n")
    result = run_cli("train", str(config), "--out", str(tmp_path / "run"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines == [
        f"error: {config}: optim.lr: Input should be greater than 0",
        f"error: {config}: train.stepz: unknown key (did you mean steps?)",
    ]


def test_sandbox_run_without_a_command_says_where_it_goes():
    line = one_error_line(run_cli("sandbox", "run", "--memory", "256"))
    assert "give it after --" in line


def test_version_and_plain_help():
    version = run_cli("--version")
    assert version.returncode == 0 and version.stdout.startswith("posttrain ")
    help_text = run_cli("sft", "--help").stdout
    assert "[sft] table" in help_text  # a config table's name is text, not rich markup
    assert "<bool>" not in help_text and "--resume  " in help_text  # a flag takes no value
    assert "[required]" in run_cli("inspect", "--help").stdout
