"""The GRPO-vs-TRL benchmark script: its config mapping, and one tiny end-to-end run."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "grpo_vs_trl.py"


def _load_script():
    spec = importlib.util.spec_from_file_location("grpo_vs_trl", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bench_config_applies_the_flags():
    bench = _load_script()
    args = bench.parse_args(
        [
            "--model",
            "tiny-llama",
            "--prompts",
            "3",
            "--group-size",
            "5",
            "--max-tokens",
            "7",
            "--steps",
            "2",
            "--warmup",
            "1",
            "--threads",
            "1",
        ]
    )
    config = bench.bench_config(args)
    assert config.model.name == "tiny-llama" and config.model.dtype == "float32"
    assert (config.rollout.prompts_per_step, config.rollout.group_size, config.rollout.max_new_tokens) == (3, 5, 7)
    assert config.rollout.temperature == 0.7 and config.optim.lr == 1e-5
    assert config.algorithm.dynamic_sampling is False and config.algorithm.kl_coef == 0.0
    assert config.train.steps == 3
    tasks = bench.step_tasks(config, 3)
    assert [len(t) for t in tasks] == [3, 3, 3]
    # Deterministic: both sides of the benchmark draw the same prompts.
    assert [[t.id for t in s] for s in tasks] == [[t.id for t in s] for s in bench.step_tasks(config, 3)]


def test_group_size_one_is_refused():
    bench = _load_script()
    with pytest.raises(SystemExit):
        bench.parse_args(["--group-size", "1"])


@pytest.mark.slow
def test_tiny_end_to_end(tmp_path):
    pytest.importorskip("trl")
    pytest.importorskip("datasets")
    out = tmp_path / "result.json"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--model",
            "tiny-llama",
            "--prompts",
            "2",
            "--group-size",
            "2",
            "--max-tokens",
            "4",
            "--steps",
            "1",
            "--warmup",
            "0",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout)  # stdout holds only the JSON
    assert report == json.loads(out.read_text())
    assert report["posttrain_step_s"] > 0 and report["trl_step_s"] > 0
    assert report["ratio"] == pytest.approx(report["posttrain_step_s"] / report["trl_step_s"])
    assert report["same_prompts"] is True
    assert report["completions_per_step"] == 4 and report["steps_measured"] == 1
    assert len(report["posttrain_step_s_measured"]) == len(report["trl_step_s_measured"]) == 1
    assert report["trl_version"]
