"""summary.json's `heldout` table: base, SFT and RL pass@1 per held-out set over the same
items, paired bootstrap intervals of each gain, the hand-written set task by task."""

from posttrain.pipeline.evaluation import EvalResult
from posttrain.pipeline.stage_summary import heldout_table, stages_summary


def result(per_item: dict[str, float]) -> EvalResult:
    return EvalResult(per_item=per_item, per_domain={}, overall=sum(per_item.values()) / len(per_item))


def test_each_set_gets_pass_at_1_per_stage_and_paired_intervals():
    sets = {"i1": "instances", "i2": "instances", "t1": "templates", "t2": "templates", "h1": "handwritten"}
    base = result({"i1": 0, "i2": 0, "t1": 0, "t2": 1, "h1": 0})
    sft = result({"i1": 1, "i2": 0, "t1": 1, "t2": 1, "h1": 0})
    rl = result({"i1": 1, "i2": 1, "t1": 1, "t2": 1, "h1": 1})
    table = heldout_table([("base", base), ("sft", sft), ("rl", rl)], sets, samples=200, seed=0)
    assert list(table) == ["instances", "templates", "handwritten"]  # no held-out family set here
    instances = table["instances"]
    assert (instances["base"], instances["sft"], instances["rl"], instances["n"]) == (0.0, 0.5, 1.0, 2)
    assert instances["rl_minus_base"]["delta"] == 1.0 and instances["rl_minus_base"]["ci95"] == [1.0, 1.0]
    low, high = instances["rl_minus_sft"]["ci95"]
    assert instances["rl_minus_sft"]["delta"] == 0.5 and 0.0 <= low <= 0.5 <= high <= 1.0
    assert set(instances) == {"base", "sft", "rl", "sft_minus_base", "rl_minus_base", "rl_minus_sft", "n"}
    assert table["handwritten"]["tasks"] == {"h1": {"base": 0, "sft": 0, "rl": 1}}
    assert "tasks" not in table["templates"]

    summary = stages_summary(base, sft, rl, samples=200, seed=0, sets=sets)
    assert summary["heldout"] == table
    assert "heldout" not in stages_summary(base, sft, rl, samples=200, seed=0)


def test_stages_carry_pass_at_1_by_commands_needed_and_episode_lengths_when_measured():
    base = result({"a": 0, "b": 0})
    sft = EvalResult(
        per_item={"a": 1, "b": 0},
        per_domain={},
        overall=0.5,
        per_steps_needed={"1": 1.0, "4": 0.0},
        episodes={"mean_turns": 3.0, "mean_context_tokens": 900.0, "max_context_tokens": 1200.0},
    )
    stages = stages_summary(base, sft, sft, samples=50, seed=0)["stages"]
    assert "by_steps_needed" not in stages["base"] and "episodes" not in stages["base"]
    assert stages["sft"]["by_steps_needed"] == {"1": 1.0, "4": 0.0}
    assert stages["rl"]["episodes"]["max_context_tokens"] == 1200.0
    assert EvalResult.from_json(sft.to_json()) == sft
