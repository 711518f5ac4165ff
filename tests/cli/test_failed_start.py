"""`posttrain train` checks everything it can before writing: a config that fails while its
domains are built leaves no run directory, a directory left by a failed start is replaced by
the next start, a started run is never replaced, and `--check` prints the plan and writes
nothing. Config errors are found before torch is imported."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "posttrain.cli"]


def run_cli(*args, timeout=600, **env):
    """`posttrain ARGS` in a process of its own; `env`: variables to set besides (or instead of) the defaults."""
    return subprocess.run(
        CLI + [str(a) for a in args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env={**os.environ, "OMP_NUM_THREADS": "1", "COLUMNS": "200", **env},
    )


TINY = """
seed = 1
threads = 1
[model]
name = "tiny-llama"
[[domains]]
name = "qa"
source = "jsonl:{data}"
heldout = 2
[rollout]
prompts_per_step = 2
group_size = 2
max_new_tokens = 2
[algorithm]
dynamic_sampling = false
[train]
steps = 1
"""


def write(tmp_path: Path, lines: list[str]) -> Path:
    data = tmp_path / "qa.jsonl"
    data.write_text("".join(line + "\n" for line in lines))
    config = tmp_path / "run.toml"
    config.write_text(TINY.format(data=data.name))
    return config


GOOD_LINES = [json.dumps({"prompt": f"{i} + 1 =", "answer": str(i + 1)}) for i in range(8)]


def test_a_bad_task_file_writes_nothing_and_the_fixed_config_starts(tmp_path):
    config = write(tmp_path, GOOD_LINES[:3] + ["{not json"] + GOOD_LINES[3:])
    out = tmp_path / "run"
    failed = run_cli("train", config, "--out", out)
    assert failed.returncode == 2 and "Traceback" not in failed.stderr
    assert "qa.jsonl:4" in failed.stderr
    assert not out.exists()  # nothing written: the fixed config is not refused
    # an older failed start (before this check existed) left a config.toml and an inspection
    out.mkdir()
    (out / "config.toml").write_text("broken = true\n")
    (out / "quality").mkdir()
    write(tmp_path, GOOD_LINES)
    started = run_cli("train", config, "--out", out)
    assert started.returncode == 0, started.stderr[-3000:]
    assert "replaces a start that failed before training" in started.stderr
    assert not (out / "quality").exists()
    assert 'source = "jsonl:' in (out / "config.toml").read_text()
    assert json.loads((out / "summary.json").read_text())["steps"] == 1
    refused = run_cli("train", config, "--out", out)  # a run that trained is never replaced
    assert refused.returncode == 2 and "run directory is not empty; use --resume" in refused.stderr


def test_check_prints_the_plan_and_writes_nothing(tmp_path):
    config = write(tmp_path, GOOD_LINES)
    out = tmp_path / "run"
    result = run_cli("train", config, "--check", "--out", out)
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)
    (domain,) = plan["domains"]
    assert domain["items"] == 8 and domain["heldout"] == 2 and domain["training_pool"] == 6
    assert plan["rl"]["samples_total"] == 1 * 2 * 2
    assert "domain qa (jsonl:" in result.stderr and "check passed: nothing was loaded or written" in result.stderr
    assert not out.exists()


def test_a_setting_the_backend_ignores_is_noted(tmp_path):
    config = write(tmp_path, GOOD_LINES)
    config.write_text(config.read_text() + '[engine]\nbackend = "builtin"\nmax_batch_size = 8\n')
    result = run_cli("train", config, "--check")
    assert result.returncode == 0, result.stderr
    assert "note: [engine] max_batch_size: used by the hf backend only; the builtin backend ignores it" in result.stderr


def test_config_and_task_errors_are_found_before_torch_loads(tmp_path):
    config = write(tmp_path, GOOD_LINES[:1])  # 1 item, 2 held out: the domain cannot be built
    probe = (
        "import sys\n"
        "from pathlib import Path\n"
        "from posttrain.errors import PosttrainError\n"
        "from posttrain.pipeline.training_run import check_run\n"
        f"try:\n    check_run(Path({str(config)!r}), Path({str(tmp_path / 'run')!r}), False)\n"
        "except PosttrainError as exc:\n    print('error', exc)\n"
        "print('torch loaded' if 'torch' in sys.modules else 'torch not loaded')\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert "held-out items but the source has only 1" in result.stdout, result.stderr
    assert result.stdout.strip().endswith("torch not loaded")


def test_vllm_backend_without_vllm_is_one_line_naming_the_key_and_the_install(tmp_path):
    import importlib.util

    import pytest

    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vLLM is installed in this environment (the error is for environments without it)")
    config = write(tmp_path, GOOD_LINES)
    config.write_text(config.read_text() + '[engine]\nbackend = "vllm"\n')
    out = tmp_path / "run"
    for args in (("--check",), ("--out", out)):
        result = run_cli("train", config, *args)
        assert result.returncode != 0
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(lines) == 1, result.stderr
        assert '[engine] backend = "vllm": vLLM is not installed' in lines[0] and "make setup-vllm" in lines[0]
    assert not out.exists()
