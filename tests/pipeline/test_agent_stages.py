"""A train config with [sft] and [curriculum] over generated terminal tasks: the warm start runs
first, RL starts from its model, and summary.json compares base, SFT and RL on the same held-out
items with paired intervals; a resumed run skips the finished warm start."""

import json
from pathlib import Path

import pytest

from posttrain.pipeline.driver import train
from tests.sandbox.conftest import BWRAP_MISSING

HANDWRITTEN = Path(__file__).resolve().parents[2] / "tasks" / "terminal"
CONFIG = """
seed = 0
threads = 1
[model]
name = "tiny-llama"
[[domains]]
name = "gen"
kind = "terminal"
source = "terminal-gen:files-dirs,archives"
difficulty = 1
heldout = 4
size = 200
heldout_families = ["archives"]
heldout_template_fraction = 0.5
heldout_template_items = 2
heldout_family_items = 2
heldout_handwritten = "HANDWRITTEN"
heldout_handwritten_items = 2
[agent]
tools = ["bash", "finish"]
max_steps = 2
reply_tokens = 16
max_context_tokens = 1024
[sft]
demonstrations = 4
epochs = 1
batch_size = 2
lr = 1e-3
rejection_rounds = 1
rejection_tasks = 2
rejection_samples = 2
[curriculum]
enabled = true
min_episodes = 2
[rollout]
prompts_per_step = 2
group_size = 2
[algorithm]
dynamic_sampling = false
[train]
steps = 2
checkpoint_every = 1
keep_checkpoints = 1
"""


@pytest.mark.slow
@pytest.mark.skipif(bool(BWRAP_MISSING), reason=str(BWRAP_MISSING))
def test_sft_then_rl_reports_three_stages_and_resumes_without_redoing_the_warm_start(tmp_path):
    config = tmp_path / "agent.toml"
    config.write_text(CONFIG.replace("HANDWRITTEN", str(HANDWRITTEN)))
    run = tmp_path / "run"
    summary = train(config, run)
    stages = summary["stages"]
    assert set(stages) == {"base", "sft", "rl"}
    for stage in stages.values():
        assert {"overall", "files-dirs", "archives"} <= set(stage["heldout_pass_at_1"])
        assert stage["n_heldout"] == 4 + 2 + 2 + 2  # instances, templates, families, handwritten
        # the generated items by the number of commands their reference takes; every episode's length
        assert stage["by_steps_needed"] and all(int(n) >= 1 for n in stage["by_steps_needed"])
        episodes = stage["episodes"]
        assert 1 <= episodes["mean_turns"] and 0 < episodes["mean_context_tokens"] <= episodes["max_context_tokens"]
    heldout = summary["heldout"]
    assert list(heldout) == ["instances", "templates", "families", "handwritten"]
    for name, n in (("instances", 4), ("templates", 2), ("families", 2), ("handwritten", 2)):
        entry = heldout[name]
        assert entry["n"] == n and all(0.0 <= entry[stage] <= 1.0 for stage in ("base", "sft", "rl"))
        low, high = entry["rl_minus_base"]["ci95"]
        assert -1.0 <= low <= high <= 1.0
    assert sorted(heldout["handwritten"]["tasks"]) == ["add-make-test-target", "backup-script-args"]
    for key in ("rl_minus_base_ci95", "rl_minus_sft_ci95"):
        low, high = summary[key]
        assert -1.0 <= low <= high <= 1.0
    sft_eval = json.loads((run / "sft" / "eval_sft.json").read_text())
    assert json.loads((run / "eval_before.json").read_text()) == sft_eval  # RL starts where SFT ended
    assert (run / "sft" / "model" / "config.json").is_file() and (run / "checkpoints" / "step-2").is_dir()
    assert (run / "sft" / "accepted-1.jsonl").is_file()
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert all(any(k.startswith("curriculum/") for k in r) for r in records)  # pass rates per cell

    again = train(None, run, resume=True)  # everything done: nothing is retrained
    assert again["stages"] == summary["stages"] and again["heldout"] == summary["heldout"]
    assert len((run / "metrics.jsonl").read_text().splitlines()) == 2
