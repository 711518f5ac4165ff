"""The agent settings a model was trained with, saved beside its weights as agent_settings.json.

A run with terminal (agent) domains writes the file into every checkpoint and model directory it
saves: the `[agent]` table's settings that shape what the model saw (its tools, turns, tokens
per turn, context, scratch notes) and the system prompt its episodes began with. `posttrain eval`
and `posttrain serve` of that directory read it back, so the model is evaluated and served with
the prompt it learned on rather than the defaults.

    settings = TrainedAgentSettings.from_agent_config(config.agent)
    save_checkpoint(..., extra_files=checkpoint_files(config))   # {} for a run without agents
    read_agent_settings(Path("runs/x/checkpoints/step-10"))       # None when there is no file
    model_agent_settings("builtin:runs/x/checkpoints/step-10")     # (settings, the file) or None
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from posttrain.agent.loop import system_prompt
from posttrain.config import AgentConfig, RunConfig, check_agent_tools
from posttrain.errors import PosttrainError
from posttrain.models.spec import EMBEDDED, parse_model_spec

AGENT_SETTINGS_FILE = "agent_settings.json"


class TrainedAgentSettings(BaseModel):
    """What an agent's episodes looked like in training (the fields mean what `[agent]`'s do)."""

    model_config = ConfigDict(extra="forbid")

    tools: list[str] | None = Field(description="the tools offered; null: all")
    max_steps: int = Field(ge=1)
    reply_tokens: int = Field(ge=8)
    max_context_tokens: int = Field(ge=256)
    scratch_notes: bool
    max_idle_turns: int | None = Field(None, ge=1, description="turns without a tool call that end an episode")
    system_prompt: str = Field(description="the system message every episode began with")

    @field_validator("tools")
    @classmethod
    def _known_tools(cls, value: list[str] | None) -> list[str] | None:
        return check_agent_tools(value)

    @classmethod
    def from_agent_config(cls, config: AgentConfig) -> TrainedAgentSettings:
        return cls(
            tools=config.tools,
            max_steps=config.max_steps,
            reply_tokens=config.reply_tokens,
            max_context_tokens=config.max_context_tokens,
            scratch_notes=config.scratch_notes,
            max_idle_turns=config.max_idle_turns,
            system_prompt=system_prompt(config.tools),
        )

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), indent=2) + "\n"


def checkpoint_files(config: RunConfig) -> dict[str, str]:
    """The files a run saves beside its weights: agent_settings.json when it trains an agent
    (a terminal domain), nothing otherwise."""
    if not any(domain.kind == "terminal" for domain in config.domains):
        return {}
    return {AGENT_SETTINGS_FILE: TrainedAgentSettings.from_agent_config(config.agent).to_json()}


def read_agent_settings(directory: Path) -> TrainedAgentSettings | None:
    """`directory`/agent_settings.json, or None when it has none. A file that is not JSON, or a
    field missing or of the wrong kind, is a PosttrainError naming the file and the field."""
    path = Path(directory) / AGENT_SETTINGS_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PosttrainError(f"{path}: not a readable JSON file: {exc}") from None
    try:
        return TrainedAgentSettings.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "(top level)"
        reason = error["msg"].removeprefix("Value error, ")
        raise PosttrainError(f"{path}: {where}: {reason}") from None


def model_agent_settings(model: str) -> tuple[TrainedAgentSettings, Path] | None:
    """The settings saved beside a local model (a spec such as builtin:DIR or hf:DIR, or a bare
    directory) and the file they came from; None for an embedded or remote model, or a
    directory without the file."""
    spec = parse_model_spec(model)
    if spec.backend == "openai" or spec.model in EMBEDDED:
        return None
    directory = Path(spec.model).expanduser()
    settings = read_agent_settings(directory)
    return (settings, directory / AGENT_SETTINGS_FILE) if settings is not None else None
