"""The DPO-vs-TRL benchmark script (and its SFT objective): its data and flags, and tiny
end-to-end runs of each objective."""

from __future__ import annotations

import pytest

from tests.benchmarks.scripts import load_script, run_script


def test_pairs_are_deterministic_conversations_of_both_length_orders():
    bench = load_script("dpo_vs_trl")
    rows = bench.preference_rows(4)
    assert rows == bench.preference_rows(4)
    assert all(r["prompt"][0]["role"] == "user" and r["chosen"][0]["role"] == "assistant" for r in rows)
    longer = [len(r["chosen"][0]["content"]) > len(r["rejected"][0]["content"]) for r in rows]
    assert True in longer and False in longer


def test_warmup_must_leave_a_timed_step():
    bench = load_script("dpo_vs_trl")
    with pytest.raises(SystemExit):
        bench.parse_args(["--steps", "2", "--warmup", "2"])


@pytest.mark.slow
@pytest.mark.parametrize("objective", ["dpo", "sft"])
def test_tiny_end_to_end_losses_agree_with_trl(tmp_path, objective):
    pytest.importorskip("trl")
    pytest.importorskip("datasets")
    args = ["--model", "tiny-llama", "--objective", objective, "--pairs", "4", "--batch-size", "2", "--steps", "2"]
    report = run_script("dpo_vs_trl", [*args, "--warmup", "1"], tmp_path / "result.json")
    assert report["objective"] == objective
    assert len(report["posttrain_losses"]) == len(report["trl_losses"]) == 2
    assert report["max_loss_diff"] <= 1e-4 and report["losses_agree_1e-4"] is True
    assert report["ratio"] == pytest.approx(report["posttrain_step_s"] / report["trl_step_s"])
    assert report["trl_version"]
