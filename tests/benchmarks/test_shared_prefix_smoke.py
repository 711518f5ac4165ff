"""The shared-prefix benchmark script: its episode shapes, and one tiny end-to-end run."""

from __future__ import annotations

import pytest

from tests.benchmarks.scripts import load_script, run_script


def test_episodes_share_the_prompt_and_mask_observations_between_replies():
    bench = load_script("shared_prefix")
    samples = bench.episode_samples([1] * 50, 8, (40, 150), 1000, seed=0)
    assert len(samples) == 8 and all(s.prompt_ids == [1] * 50 for s in samples)
    for s in samples:
        assert 40 <= len(s.completion_ids) <= 150
        assert s.completion_mask[0] == s.completion_mask[-1] == 1
        replies = "".join(map(str, s.completion_mask)).split("0")
        assert 2 <= len([r for r in replies if r]) <= 3
        assert all(lp == 0.0 for lp, m in zip(s.engine_logprobs, s.completion_mask) if not m)


def test_tiny_end_to_end(tmp_path):
    args = ["--model", "tiny-llama", "--group-size", "2", "--completion-tokens", "20,30", "--rounds", "1"]
    report = run_script("shared_prefix", [*args, "--warmup", "0"], tmp_path / "result.json")
    assert report["shared_step_s"] > 0 and report["full_step_s"] > 0
    assert report["speedup"] == pytest.approx(report["full_step_s"] / report["shared_step_s"])
    assert report["prefix_tokens_shared"] == report["prompt_tokens"] - 1  # group of 2: one copy saved
    assert report["logprobs_identical"] is True
    assert report["cpu"]["model_name"]
