"""agent_settings.json: the `[agent]` settings and system prompt a run trained its agent with,
written beside its weights and read back; a malformed file is one error naming the file and the
field."""

import json

import pytest

from posttrain.agent.loop import system_prompt
from posttrain.agent.trained_settings import (
    AGENT_SETTINGS_FILE,
    TrainedAgentSettings,
    checkpoint_files,
    model_agent_settings,
    read_agent_settings,
)
from posttrain.config import AgentConfig, RunConfig
from posttrain.errors import PosttrainError

AGENT = AgentConfig(
    tools=["bash", "finish"], max_steps=3, reply_tokens=96, max_context_tokens=1024, scratch_notes=False
)


def run_config(kind: str) -> RunConfig:
    source = "harbor:tasks/terminal" if kind == "terminal" else "reasoning-gym:basic_arithmetic"
    return RunConfig.model_validate(
        {"domains": [{"name": "d", "kind": kind, "source": source}], "agent": AGENT.model_dump()}
    )


def test_an_agent_run_saves_its_settings_and_they_read_back(tmp_path):
    files = checkpoint_files(run_config("terminal"))
    assert list(files) == [AGENT_SETTINGS_FILE]
    (tmp_path / AGENT_SETTINGS_FILE).write_text(files[AGENT_SETTINGS_FILE])
    settings = read_agent_settings(tmp_path)
    assert settings == TrainedAgentSettings(
        tools=["bash", "finish"],
        max_steps=3,
        reply_tokens=96,
        max_context_tokens=1024,
        scratch_notes=False,
        system_prompt=system_prompt(["bash", "finish"]),  # what every training episode began with
    )
    assert "- bash(" in settings.system_prompt and "read_file" not in settings.system_prompt
    assert model_agent_settings(f"builtin:{tmp_path}") == (settings, tmp_path / AGENT_SETTINGS_FILE)
    assert model_agent_settings(str(tmp_path)) == (settings, tmp_path / AGENT_SETTINGS_FILE)


def test_a_run_without_agents_saves_nothing_and_a_model_without_the_file_has_none(tmp_path):
    assert checkpoint_files(run_config("answer")) == {}
    assert read_agent_settings(tmp_path) is None
    assert model_agent_settings(f"builtin:{tmp_path}") is None
    assert model_agent_settings("smollm2-135m") is None
    assert model_agent_settings("openai:http://127.0.0.1:8000/v1#m") is None


@pytest.mark.parametrize(
    "change, expected",
    [
        (lambda d: d.pop("reply_tokens"), "reply_tokens: Field required"),
        (lambda d: d.update(max_steps="three"), "max_steps: Input should be a valid integer"),
        (lambda d: d.update(tools=["bash", "fly"]), "tools: unknown tool(s) fly"),
        (lambda d: d.update(scratch_notes="maybe"), "scratch_notes: Input should be a valid boolean"),
        (lambda d: d.update(temperature=1.0), "temperature: Extra inputs are not permitted"),
    ],
)
def test_a_malformed_file_names_the_file_and_the_field(tmp_path, change, expected):
    data = json.loads(checkpoint_files(run_config("terminal"))[AGENT_SETTINGS_FILE])
    change(data)
    (tmp_path / AGENT_SETTINGS_FILE).write_text(json.dumps(data))
    with pytest.raises(PosttrainError) as raised:
        read_agent_settings(tmp_path)
    assert str(raised.value).startswith(f"{tmp_path / AGENT_SETTINGS_FILE}: {expected}")


def test_a_file_that_is_not_json_names_the_file(tmp_path):
    (tmp_path / AGENT_SETTINGS_FILE).write_text("{tools: bash")
    with pytest.raises(PosttrainError, match=f"{tmp_path / AGENT_SETTINGS_FILE}: not a readable JSON file"):
        model_agent_settings(f"builtin:{tmp_path}")
