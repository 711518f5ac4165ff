"""`posttrain eval` of a trained agent's checkpoint runs with the settings it was trained with
(its agent_settings.json: tools, turns, tokens per turn, context, scratch notes, system prompt),
says so in one line, and lets any flag override a saved value."""

import json

import pytest

from posttrain.agent.loop import system_prompt
from posttrain.config import AgentConfig
from posttrain.errors import PosttrainError
from posttrain.evaluate.agent_settings import AgentFlags, resolve_agent_settings
from tests.evaluate.test_eval_run import SUITE, needs_bwrap, posttrain
from tests.trained_agent_checkpoint import SAVED_PROMPT_MARK, trained_settings, write_trained_agent_checkpoint

SOURCE = "runs/x/checkpoints/step-1/agent_settings.json"


def test_saved_settings_are_the_defaults():
    saved = trained_settings()
    resolved = resolve_agent_settings(AgentFlags(), saved, SOURCE, context_limit=8192)
    assert resolved.config == AgentConfig(
        tools=["bash", "finish"], max_steps=2, reply_tokens=16, max_context_tokens=1024, scratch_notes=False
    )
    assert resolved.system_prompt == saved.system_prompt
    assert resolved.line == (
        f"agent settings from {SOURCE}: tools bash,finish, 16-token turns, 2 turns, no scratch notes, "
        "1024-token context, the trained system prompt"
    )


def test_a_flag_overrides_its_saved_value_and_the_line_says_which():
    saved = trained_settings()
    flags = AgentFlags(max_steps=5, reply_tokens=32, scratch_notes=True)
    resolved = resolve_agent_settings(flags, saved, SOURCE, context_limit=512)
    assert resolved.config == AgentConfig(
        tools=["bash", "finish"], max_steps=5, reply_tokens=32, max_context_tokens=512, scratch_notes=True
    )  # the context: the saved one within the model's
    assert resolved.system_prompt == saved.system_prompt
    assert resolved.line.endswith(
        "32-token turns, 5 turns, scratch notes, 512-token context, the trained system prompt "
        "(overridden by flags: --max-steps, --reply-tokens, --scratch-notes)"
    )
    # other tools: the saved prompt lists the trained ones, so the prompt is built for these
    resolved = resolve_agent_settings(AgentFlags(tools="all"), saved, SOURCE)
    assert resolved.config.tools is None and resolved.system_prompt is None
    assert "tools all," in resolved.line and resolved.line.endswith(
        "the system prompt of these tools (overridden by flags: --tools)"
    )


def test_without_saved_settings_the_flags_and_defaults_stand_and_nothing_is_said():
    resolved = resolve_agent_settings(AgentFlags(tools="bash,finish"), None, context_limit=8192)
    assert resolved.config == AgentConfig(
        tools=["bash", "finish"], max_steps=30, reply_tokens=256, max_context_tokens=8192, scratch_notes=True
    )
    assert resolved.system_prompt is None and resolved.line is None
    with pytest.raises(PosttrainError, match="--tools: must include finish"):
        resolve_agent_settings(AgentFlags(tools="bash"), trained_settings())


def test_a_malformed_settings_file_stops_eval_in_one_line_naming_it(tmp_path):
    (tmp_path / "agent_settings.json").write_text(json.dumps({"tools": ["bash", "finish"]}))
    result = posttrain(
        "eval",
        "--tasks",
        str(SUITE),
        "--agent",
        "model",
        "--model",
        f"builtin:{tmp_path}",
        "--out",
        str(tmp_path / "o"),
    )
    assert result.returncode == 2
    assert f"{tmp_path / 'agent_settings.json'}: max_steps: Field required" in result.stderr


@needs_bwrap
def test_eval_of_a_trained_checkpoint_uses_its_settings_and_a_flag_overrides(tmp_path):
    checkpoint = write_trained_agent_checkpoint(tmp_path / "run")
    out = tmp_path / "eval"
    result = posttrain(
        "eval",
        "--tasks",
        str(SUITE),
        "--names",
        "hello-file",
        "--agent",
        "model",
        "--model",
        f"builtin:{checkpoint}",
        "--reply-tokens",
        "24",
        "--out",
        str(out),
    )
    assert result.returncode == 0, result.stderr[-2000:]
    lines = [line for line in result.stderr.splitlines() if line.startswith("agent settings from")]
    assert lines == [
        f"agent settings from {checkpoint}/agent_settings.json: tools bash,finish, 24-token turns, 2 turns, "
        "no scratch notes, 1024-token context, the trained system prompt (overridden by flags: --reply-tokens)"
    ]
    (row,) = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    trajectory = json.loads((out / row["trajectory"]).read_text())
    turns = trajectory["turns"]
    assert 1 <= len(turns) <= 2  # the saved max_steps, not 30
    from posttrain.models.loading import load_tokenizer

    tokenizer = load_tokenizer("smollm2-135m")
    for turn in turns:
        assert len(turn["completion_ids"]) <= 24  # the flag, not the saved 16 nor the default 256
        prompt = tokenizer.decode(turn["prompt_ids"])
        assert SAVED_PROMPT_MARK in prompt  # the saved system prompt, word for word
        assert system_prompt(["bash", "finish"]) in prompt and "read_file" not in prompt  # its tools only
        assert "turn(s) left" not in prompt  # no scratch notes, as in training


def test_a_saved_idle_turn_limit_carries_into_eval():
    saved = trained_settings().model_copy(update={"max_idle_turns": 2})
    assert resolve_agent_settings(AgentFlags(), saved, SOURCE).config.max_idle_turns == 2
    assert resolve_agent_settings(AgentFlags(), None, SOURCE).config.max_idle_turns is None
