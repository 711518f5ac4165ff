"""The system prompt a server gives chats that bring none: a trained agent's own.

A model trained as an agent learned to answer after the system prompt its episodes began with
(agent_settings.json, saved beside its weights); without it, a plain chat reaches the model in a
form it never saw in training. So a chat request with no system message and no tools gets that
prompt, unless `--system-prompt TEXT` names another or `--system-prompt ''` turns it off.
"""

from __future__ import annotations

from posttrain.agent.trained_settings import model_agent_settings


def default_system_prompt(model: str, flag: str | None) -> tuple[str | None, str | None]:
    """(the system prompt for chats that bring none, or None; the line saying where it came
    from, or None when there is nothing to say). `flag`: --system-prompt (None: not given)."""
    if flag:
        return flag, "chats without a system message or tools get the system prompt from --system-prompt"
    found = model_agent_settings(model)
    if found is None:
        return None, None
    settings, path = found
    if flag == "":
        return None, f"the trained agent's system prompt in {path} is not used (--system-prompt '')"
    return settings.system_prompt, (
        f"chats without a system message or tools get the trained agent's system prompt from {path} "
        "(--system-prompt '' turns it off)"
    )
