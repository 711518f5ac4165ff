"""kind = "terminal" domains in a training config: GRPO over whole agent episodes."""

import json
import sqlite3
from pathlib import Path

import pytest

from posttrain.agent.trained_settings import TrainedAgentSettings, read_agent_settings
from posttrain.config import load_config
from posttrain.errors import ConfigError
from posttrain.models.loading import load_model
from posttrain.pipeline.driver import train
from tests.conftest import expects_bit_equality
from tests.sandbox.conftest import BWRAP_MISSING

SUITE = Path(__file__).resolve().parents[2] / "tasks" / "terminal"

CONFIG = """
seed = 0
[model]
name = "tiny-llama"
[[domains]]
name = "term"
kind = "terminal"
source = "harbor:{suite}"
names = ["hello-file", "count-lines", "make-script-executable"]
heldout = 1
[rollout]
prompts_per_step = 1
group_size = 2
temperature = 1.0
[agent]
max_steps = 2
reply_tokens = 12
max_context_tokens = 2048
[algorithm]
dynamic_sampling = false
[train]
steps = 2
checkpoint_every = 2
keep_checkpoints = 1
"""


@pytest.mark.skipif(bool(BWRAP_MISSING), reason=str(BWRAP_MISSING))
def test_two_steps_of_multi_turn_grpo(tmp_path):
    path = tmp_path / "terminal.toml"
    path.write_text(CONFIG.format(suite=SUITE))
    summary = train(path, tmp_path / "run")
    records = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    bit_equal = expects_bit_equality(load_model("tiny-llama", seed=0))
    assert [r["step"] for r in records] == [1, 2]
    for record in records:
        assert record["groups"] == 1 and "reward/term" in record
        if bit_equal:
            assert record["logprob_mismatch_max"] == 0.0  # builtin engine and trainer agree to the bit
        else:  # where the engine's start-up probe found this CPU's kernels round some rows differently
            assert record["logprob_mismatch_max"] < 1e-4
        assert record["train_tokens"] > 0
        assert record["prefix_tokens_shared"] > 0  # the group's episodes share the agent's prompt: run once
    rows = (
        sqlite3.connect(tmp_path / "run" / "trajectories.sqlite")
        .execute("SELECT task_id, finish_reason, details, step, logprobs FROM trajectories")
        .fetchall()
    )
    assert len(rows) == 2 * 2
    details = json.loads(rows[0][2])
    assert details["summary"]["turns"] >= 1 and details["turns"][0]["tool_calls"]
    for _, _, stored, step, engine in rows:  # the trainer's side of each stored token (the dashboard's view)
        trainer, engine = json.loads(stored)["trainer_logprobs"], json.loads(engine)
        worst = max(abs(t - e) for t, e in zip(trainer, engine, strict=True))
        assert worst <= records[step - 1]["logprob_mismatch_max"] + 1e-7
    assert summary["n_heldout"] == 1 and summary["eval_after"]["per_domain"].keys() == {"term"}
    # the checkpoint carries the agent's settings, so eval and serve use the prompt it trained on
    saved = read_agent_settings(tmp_path / "run" / "checkpoints" / "step-2")
    assert saved == TrainedAgentSettings.from_agent_config(load_config(path).agent)
    assert (saved.max_steps, saved.reply_tokens, saved.max_context_tokens) == (2, 12, 2048)


def test_terminal_domains_need_a_harbor_source(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('[[domains]]\nname = "t"\nkind = "terminal"\nsource = "reasoning-gym:basic_arithmetic"\n')
    with pytest.raises(ConfigError, match=r"domains\[0\]|domains.0"):
        load_config(path)
