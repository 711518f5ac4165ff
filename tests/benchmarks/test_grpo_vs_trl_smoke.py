"""The GRPO-vs-TRL benchmark script: its config mapping, and one tiny end-to-end run."""

from __future__ import annotations

import pytest

from tests.benchmarks.scripts import load_script, run_script


def test_bench_config_applies_the_flags():
    bench = load_script("grpo_vs_trl")
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
    bench = load_script("grpo_vs_trl")
    with pytest.raises(SystemExit):
        bench.parse_args(["--group-size", "1"])


@pytest.mark.slow
def test_tiny_end_to_end(tmp_path):
    pytest.importorskip("trl")
    pytest.importorskip("datasets")
    args = ["--model", "tiny-llama", "--prompts", "2", "--group-size", "2", "--max-tokens", "4", "--steps", "1"]
    report = run_script("grpo_vs_trl", [*args, "--warmup", "0"], tmp_path / "result.json")
    assert report["posttrain_step_s"] > 0 and report["trl_step_s"] > 0
    assert report["ratio"] == pytest.approx(report["posttrain_step_s"] / report["trl_step_s"])
    assert report["same_prompts"] is True
    assert report["completions_per_step"] == 4 and report["steps_measured"] == 1
    assert len(report["posttrain_step_s_measured"]) == len(report["trl_step_s_measured"]) == 1
    assert report["trl_version"]
