"""Joint training end to end on the tiny model: a run with an adaptive mixture, the monitor and
the gradient-conflict measurement writes what docs/joint_training.md promises, resumes with its
monitor intact, and `pipeline set --policy` is validated."""

import json
import os
import subprocess
import sys
from pathlib import Path

from posttrain.curriculum.seesaw import SeesawMonitor, paired_change

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "posttrain.cli"]
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "COLUMNS": "200"}

JOINT = """
[mixture]
policy = "learnability"
floor = 0.1
[monitor]
every = 2
items = 4
reaction = "reweight"
conflict_every = 2
"""


def cli(*args):
    return subprocess.run(CLI + [str(a) for a in args], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=600)


def test_a_joint_run_logs_weights_monitor_and_conflicts(tmp_path, tiny_config):
    config = tiny_config(steps=4, checkpoint_every=2)
    config.write_text(config.read_text() + JOINT)
    out = tmp_path / "run"
    result = cli("train", config, "--out", out)
    assert result.returncode == 0, result.stderr[-3000:]
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert len(records) == 4
    for record in records:
        weights = [record[f"mixture/{d}/weight"] for d in ("add", "count")]
        assert abs(sum(weights) - 1.0) < 1e-9 and min(weights) >= 0.1 - 1e-9
    assert all(f"monitor/{d}/accuracy" in records[1] for d in ("add", "count"))
    assert records[1]["monitor/add/ci_low"] <= records[1]["monitor/add/accuracy"] <= records[1]["monitor/add/ci_high"]
    assert "monitor/add/accuracy" not in records[0]  # every 2 steps
    token_shares = [r for r in records if "mixture/add/token_share" in r]
    assert token_shares and all(0.0 <= r["mixture/add/token_share"] <= 1.0 for r in token_shares)
    path = out / "conflicts.jsonl"  # the random tiny model rarely earns a reward: often nothing to measure
    conflicts = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    assert all("conflict/domains_measured" in r for r in (records[1], records[3]))
    for row in conflicts:  # a step whose groups all lacked signal in one domain measures nothing
        assert row["step"] in (2, 4) and "add|count" in row["cosines"]["overall"]
        assert "layer0.mlp" in row["cosines"]["groups"] and -1.0 <= row["summary"]["add|count"]["overall"] <= 1.0
    summary = json.loads((out / "summary.json").read_text())
    assert isinstance(summary["seesaw_alarms"], list)
    assert set(summary["per_domain_delta"]) == {"add", "count"}
    state = json.loads((out / "checkpoints" / "step-4" / "state.json").read_text())["mixture"]
    assert state["policy"]["name"] == "learnability" and [s for s, _ in state["monitor"]["history"]] == [0, 2, 4]


def monitored_run(tmp_path, config, settings: str):
    """Train `config` with a check of 4 items every 2 steps and `settings`; (run dir, records by step)."""
    config.write_text(config.read_text() + "[monitor]\nevery = 2\nitems = 4\n" + settings)
    out = tmp_path / "run"
    result = cli("train", config, "--out", out)
    assert result.returncode == 0, result.stderr[-3000:]
    return out, {r["step"]: r for r in map(json.loads, (out / "metrics.jsonl").read_text().splitlines())}


def test_a_rotating_monitor_checks_the_next_domain_each_time_and_reports_its_cost(tmp_path, tiny_config):
    config = tiny_config(steps=6, checkpoint_every=6)
    out, records = monitored_run(tmp_path, config, "domains_per_check = 1\nfdr = 0.1\n")
    checked = {step: sorted(k.split("/")[1] for k in records[step] if k.endswith("/accuracy")) for step in (2, 4, 6)}
    assert checked == {2: ["add"], 4: ["count"], 6: ["add"]}
    assert all(records[step]["monitor/domains_checked"] == 1.0 for step in (2, 4, 6))
    assert all(0.0 < records[step]["monitor/eval_share"] < 1.0 for step in (2, 4, 6))
    cost = json.loads((out / "summary.json").read_text())["monitor_cost"]
    assert cost["checks"] == 3 and 0.0 < cost["eval_share"] < 1.0 and cost["items_planned"] == 12


def test_a_sequential_check_stops_a_domain_whose_first_stage_shows_no_fall(tmp_path, tiny_config):
    """Checks in stages of 2 of the 4 items: a domain stops after a stage whose items fell no
    more often than they rose against its best; one that fell goes on to the end."""
    out, records = monitored_run(tmp_path, tiny_config(steps=4, checkpoint_every=4), "stage_items = 2\n")
    history = json.loads((out / "checkpoints" / "step-4" / "state.json").read_text())["mixture"]["monitor"]["history"]
    assert [step for step, _ in history] == [0, 2, 4] and all(len(v) == 4 for v in history[0][1].values())
    replay = SeesawMonitor()
    replay.observe(*history[0])
    for step, results in history[1:]:
        record = records[step]
        assert record["monitor/items_planned"] == 8
        assert record["monitor/items_evaluated"] == sum(map(len, results.values()))
        for domain, now in results.items():
            worse, better = paired_change(replay.best_items(domain)[:2], now[:2])
            assert len(now) == (2 if worse <= better else 4)
        replay.observe(step, results)
        assert record["monitor/stopped_early"] == sum(len(v) == 2 for v in results.values())
    cost = json.loads((out / "summary.json").read_text())["monitor_cost"]
    assert cost["items_evaluated"] == sum(records[s]["monitor/items_evaluated"] for s in (2, 4))


def test_in_async_mode_the_monitor_evaluates_beside_training(tmp_path, tiny_config):
    """The evaluation of step 2 runs in the background under step 2's weights and lands in a
    later record (monitor/step says whose weights); the last step's is inline."""
    config = tiny_config(steps=4, checkpoint_every=4)
    config.write_text(config.read_text().replace("[model]", 'mode = "async"\n[model]', 1) + JOINT)
    out = tmp_path / "run"
    result = cli("train", config, "--out", out)
    assert result.returncode == 0, result.stderr[-3000:]
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    evaluated = [(r["step"], r["monitor/step"]) for r in records if "monitor/step" in r]
    assert [s for _, s in evaluated] == [2, 4] and evaluated[-1] == (4, 4)
    assert 2 <= evaluated[0][0] <= 4
    for record in records:
        if "monitor/step" in record:
            assert 0.0 <= record["monitor/trainer_wait_s"] <= record["monitor/eval_s"] + 1e-6
            assert all(f"monitor/{d}/accuracy" in record for d in ("add", "count"))
    state = json.loads((out / "checkpoints" / "step-4" / "state.json").read_text())["mixture"]
    assert [s for s, _ in state["monitor"]["history"]] == [0, 2, 4]


def test_pipeline_set_policy_is_validated(tmp_path, tiny_config):
    config = tiny_config(steps=1)
    out = tmp_path / "run"
    out.mkdir()
    (out / "config.toml").write_text(config.read_text())
    bad = cli("pipeline", "set", out, "--policy", "ucb")
    assert (
        bad.returncode == 2 and "--policy 'ucb': choose one of static, sequential, learnability, bandit" in bad.stderr
    )
    good = cli("pipeline", "set", out, "--policy", "bandit")
    assert good.returncode == 0, good.stderr
    assert json.loads((out / "control.json").read_text())["policy"] == "bandit"


def test_the_monitor_needs_held_out_items(tmp_path, tiny_config):
    config = tiny_config(steps=1)
    config.write_text(config.read_text().replace("heldout = 4\n", "heldout = 0\n", 1) + "[monitor]\nevery = 2\n")
    result = cli("train", config, "--check")
    assert result.returncode == 2
    assert "domains[0].heldout: domain 'add' has no held-out items, and monitor.every needs them" in result.stderr


def test_conflicts_are_measured_per_domain_from_the_steps_groups(tmp_path, tiny_model, tokenizer):
    import torch

    from posttrain.config import AlgorithmConfig, OptimConfig, parse_config
    from posttrain.engine.interface import Completion
    from posttrain.pipeline.domain_conflicts import DomainConflicts
    from posttrain.pipeline.rollout import RolloutGroup
    from posttrain.tasks.records import Reward, Task
    from posttrain.train.trainer import PolicyTrainer

    trainer = PolicyTrainer(tiny_model, OptimConfig(lr=1e-3), AlgorithmConfig(), 1.0, pad_id=tokenizer.pad_token_id)
    generator = torch.Generator().manual_seed(0)

    def group(domain: str, passed: list[bool]) -> RolloutGroup:
        completions = [
            Completion(
                f"{domain}{i}",
                i,
                [1, 5, 9, 13],
                torch.randint(100, 5000, (6,), generator=generator).tolist(),
                [0.0] * 6,
                "length",
                "",
                0,
            )
            for i in range(len(passed))
        ]
        task = Task(id=f"{domain}-task", domain=domain, instruction="q", verifier="exact", answer="a")
        return RolloutGroup(task, completions, [Reward(value=float(p), passed=p) for p in passed])

    groups = [group("a", [True, False]), group("b", [False, True]), group("c", [False, False])]
    advantages = torch.tensor([[0.7, -0.7], [-0.7, 0.7], [0.0, 0.0]])
    config = parse_config(
        {"domains": [{"name": "a", "source": "reasoning-gym:basic_arithmetic"}], "monitor": {"conflict_every": 3}}
    )
    conflicts = DomainConflicts(config, tmp_path / "conflicts.jsonl")
    assert conflicts.due(3) and not conflicts.due(4)
    record = conflicts.measure(3, trainer, groups, advantages)
    assert record["conflict/domains_measured"] == 2.0  # c had no advantage, so no gradient
    (row,) = [json.loads(line) for line in (tmp_path / "conflicts.jsonl").read_text().splitlines()]
    assert row["step"] == 3 and set(row["cosines"]["overall"]) == {"a|b"}
    assert record["conflict/a|b/cosine"] == row["summary"]["a|b"]["overall"]
    assert -1.0 <= record["conflict/a|b/min_group_cosine"] <= 1.0
    resumed = DomainConflicts(config, tmp_path / "conflicts.jsonl", trained_through=2)
    assert resumed.path.read_text() == ""  # the row of step 3, after the checkpoint, is dropped
