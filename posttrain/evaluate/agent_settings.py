"""`posttrain eval`'s agent settings: the flags given, over what a trained model saved beside its
weights (agent_settings.json, posttrain/agent/trained_settings.py), over the command's defaults.

    resolve_agent_settings(AgentFlags(max_steps=5), saved, "runs/x/checkpoints/step-10/agent_settings.json")
    -> ResolvedAgentSettings(config=AgentConfig(max_steps=5, tools=saved.tools, ...),
                             system_prompt=saved.system_prompt,
                             line="agent settings from ...: ... (overridden by flags: --max-steps)")

A pure function: what was saved is read by the caller, and the line is the caller's to print.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import ValidationError

from posttrain.agent.trained_settings import TrainedAgentSettings
from posttrain.config import AgentConfig
from posttrain.errors import PosttrainError

# the command's defaults, for a model that saved no settings
DEFAULT_MAX_STEPS = 30
DEFAULT_REPLY_TOKENS = 256
ALL_TOOLS = "all"  # --tools all: every tool, whatever the model saved


@dataclass(frozen=True)
class AgentFlags:
    """The agent flags of `posttrain eval`; None where the flag was not given."""

    max_steps: int | None = None
    reply_tokens: int | None = None
    tools: str | None = None  # comma-separated, or "all"
    scratch_notes: bool | None = None


@dataclass(frozen=True)
class ResolvedAgentSettings:
    config: AgentConfig
    system_prompt: str | None  # the trained one; None: built from config.tools
    line: str | None  # where the settings came from; None when the model saved none


def resolve_agent_settings(
    flags: AgentFlags,
    saved: TrainedAgentSettings | None = None,
    source: str = "",
    context_limit: int | None = None,
) -> ResolvedAgentSettings:
    """Each setting from its flag when given, else from `saved` (read from `source`), else the
    default. The context is the saved one within the model's `context_limit`. The saved system
    prompt stands unless --tools changes the tools it lists."""
    tools = _tools(flags.tools) if flags.tools is not None else (saved.tools if saved else None)
    max_steps = _pick(flags.max_steps, saved and saved.max_steps, DEFAULT_MAX_STEPS)
    reply_tokens = _pick(flags.reply_tokens, saved and saved.reply_tokens, DEFAULT_REPLY_TOKENS)
    scratch_notes = _pick(flags.scratch_notes, saved.scratch_notes if saved else None, True)
    context = min(filter(None, (saved and saved.max_context_tokens, context_limit)), default=None)
    try:
        config = AgentConfig(
            max_steps=max_steps,
            reply_tokens=reply_tokens,
            tools=tools,
            scratch_notes=scratch_notes,
            max_idle_turns=saved.max_idle_turns if saved else None,
            **({"max_context_tokens": context} if context else {}),
        )
    except ValidationError as exc:
        error = exc.errors()[0]
        name = "--" + str(error["loc"][0]).replace("_", "-")
        raise PosttrainError(f"{name}: {error['msg'].removeprefix('Value error, ')}") from None
    if saved is None:
        return ResolvedAgentSettings(config, None, None)
    overridden = [
        f"--{name.replace('_', '-')}"
        for name in ("tools", "max_steps", "reply_tokens", "scratch_notes")
        if getattr(flags, name) is not None
    ]
    keep_prompt = flags.tools is None
    line = (
        f"agent settings from {source}: tools {','.join(config.tools) if config.tools else 'all'}, "
        f"{config.reply_tokens}-token turns, {config.max_steps} turns, "
        f"{'scratch notes' if config.scratch_notes else 'no scratch notes'}, "
        f"{config.max_context_tokens}-token context, "
        f"{'the trained system prompt' if keep_prompt else 'the system prompt of these tools'}"
    )
    if overridden:
        line += f" (overridden by flags: {', '.join(overridden)})"
    return ResolvedAgentSettings(config, saved.system_prompt if keep_prompt else None, line)


def _tools(flag: str) -> list[str] | None:
    if flag.strip() == ALL_TOOLS:
        return None
    return [t.strip() for t in flag.split(",") if t.strip()]


def _pick(flag, saved, default):
    return flag if flag is not None else saved if saved is not None else default
