"""A run that cannot learn says so: `--check` names the settings, and a run names the steps that
made no update, why, and what to change."""

import io
import json

import torch
from rich.console import Console

from posttrain.config import parse_config
from posttrain.pipeline.driver import train
from posttrain.pipeline.learning_signal import NoUpdateWatch, cannot_learn
from tests.cli.test_cli_errors import GOOD, run_cli


def config_with(**tables) -> object:
    data = {"model": {"name": "tiny-llama"}, "domains": [{"name": "a", "source": "reasoning-gym:basic_arithmetic"}]}
    data.update(tables)
    return parse_config(data)


def test_settings_under_which_no_step_can_update_are_named():
    assert cannot_learn(config_with()) == []
    assert cannot_learn(config_with(rollout={"group_size": 2, "top_k": 0})) == []
    (one,) = cannot_learn(config_with(rollout={"group_size": 1}))
    assert "rollout.group_size = 1" in one and "dynamic sampling" in one and "2 or more" in one
    (rloo,) = cannot_learn(
        config_with(rollout={"group_size": 1}, algorithm={"advantage": "rloo", "dynamic_sampling": False})
    )
    assert "'rloo'" in rloo and "set group_size to 2 or more" in rloo
    (greedy,) = cannot_learn(config_with(rollout={"top_k": 1}))
    assert "top_k = 1" in greedy and "set top_k = 0" in greedy
    domains = [{"name": "a", "source": "x.jsonl", "verifier": ["exact", "numeric"], "verifier_weights": [0.0, 0.0]}]
    (weightless,) = cannot_learn(config_with(domains=domains))
    assert weightless.startswith("domain 'a': verifier_weights are all 0")
    # supervised (nll) trains on every sample kept: without dynamic sampling a group of one is fine
    assert (
        cannot_learn(config_with(rollout={"group_size": 1}, algorithm={"loss": "nll", "dynamic_sampling": False})) == []
    )


def test_check_warns_of_a_group_of_one(tmp_path):
    config = tmp_path / "one.toml"
    config.write_text(GOOD + "[rollout]\ngroup_size = 1\n")
    result = run_cli("train", str(config), "--check")
    assert result.returncode == 0, result.stderr
    assert "warning: rollout.group_size = 1: dynamic sampling keeps only groups whose rewards differ" in result.stderr
    (reason,) = json.loads(result.stdout)["rl"]["cannot_learn"]
    assert reason.startswith("rollout.group_size = 1")


class Group:
    def __init__(self, rewards, truncated=0):
        self.reward_values, self._truncated = rewards, truncated

    def truncated(self):
        return self._truncated


def test_the_watch_warns_once_a_streak_reaches_its_patience_and_names_the_cause():
    lines = []
    watch = NoUpdateWatch(config_with(rollout={"group_size": 2}), lines.append, patience=3)
    zero = torch.zeros(2, 2)
    groups = [Group([0.0, 0.0], truncated=2), Group([0.0, 0.0])]
    for step in (1, 2):
        watch.observe(step, {"groups_kept": 0}, groups, zero)
    assert lines == []
    watch.observe(3, {"groups_kept": 1}, groups, torch.tensor([[0.5, -0.5], [0.0, 0.0]]))  # an update: streak over
    for step in (4, 5, 6, 7):
        watch.observe(step, {"groups_kept": 0}, groups, zero)
    (line,) = lines
    assert line.startswith("warning: steps 4-6 made no update: dynamic sampling dropped every group")
    assert "every sample scored 0" in line and "50% of the completions were cut off" in line
    solved = NoUpdateWatch(config_with(), lines.append, patience=1)
    solved.observe(1, {"groups_kept": 0}, [Group([1.0, 1.0])], zero)
    assert "too easy" in lines[-1]
    alike = NoUpdateWatch(config_with(algorithm={"dynamic_sampling": False}), lines.append, patience=1)
    alike.observe(1, {"groups_kept": 2}, [Group([1.0, 1.0]), Group([0.0, 0.0])], zero)
    assert "every advantage was 0" in lines[-1] and "raise rollout.temperature" in lines[-1]


def test_a_run_with_groups_of_one_says_each_step_made_no_update(tmp_path, tiny_config):
    config = tiny_config(steps=3, checkpoint_every=3)
    config.write_text(
        config.read_text()
        .replace("group_size = 2", "group_size = 1")
        .replace("dynamic_sampling = false", "dynamic_sampling = true")
    )
    output = io.StringIO()
    train(config, tmp_path / "run", console=Console(file=output, width=200))
    text = output.getvalue()
    assert [line.split("  ")[2] for line in text.splitlines() if line.startswith("step ")] == [
        "no update (0 of 3 groups kept)"
    ] * 3, text
    assert "loss +0.0000" not in text
    assert (
        "step 3/3" in text.split("warning: steps 1-3 made no update")[0]
        and "set rollout.group_size to 2 or more" in text
    )
