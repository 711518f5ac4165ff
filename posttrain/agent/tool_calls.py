"""Tool calls out of a model's text, tolerantly.

The format the model is taught (in the system layer) is one call per tag:

    <tool_call>{"name": "bash", "arguments": {"command": "ls"}}</tool_call>

Small models drift from it, so the parser also takes: an unclosed final tag, a ```json block or
a bare JSON object with "name"/"arguments" (or "tool"/"args", "parameters", "input"),
arguments given as a JSON string, single quotes and trailing commas, and a ```bash block as a
bash call. What still cannot be read becomes a `MalformedCall` that the loop turns into an
error observation, never an exception.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

_TAG = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FENCE = re.compile(r"```(\w*)\s*\n(.*?)```", re.DOTALL)


@dataclass
class ToolCall:
    name: str
    arguments: Any
    raw: str


@dataclass
class MalformedCall:
    raw: str
    reason: str


def format_call(name: str, arguments: dict) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


def parse_tool_calls(text: str) -> list[ToolCall | MalformedCall]:
    """Every call in `text`, in order; [] when the text holds none (a plain answer)."""
    tagged = [m.group(1) for m in _TAG.finditer(text)]
    if tagged:
        return [_parse_object(raw) for raw in tagged]
    calls: list[ToolCall | MalformedCall] = []
    for language, body in _FENCE.findall(text):
        if language in ("bash", "sh", "shell") and body.strip():
            calls.append(ToolCall("bash", {"command": body.strip()}, body))
        elif language in ("json", "") and _looks_like_call(body):
            calls.append(_parse_object(body))
    if calls:
        return calls
    bare = _bare_object(text)
    if bare is not None and _looks_like_call(bare):
        return [_parse_object(bare)]
    return []


def _looks_like_call(text: str) -> bool:
    return bool(re.search(r"""["'](name|tool|function)["']\s*:""", text))


def _bare_object(text: str) -> str | None:
    start = text.find("{")
    end = text.rfind("}")
    return text[start : end + 1] if 0 <= start < end else None


def _load(raw: str) -> Any:
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        pass
    relaxed = re.sub(r",\s*([}\]])", r"\1", raw)  # trailing commas
    try:
        return json.loads(relaxed)
    except json.JSONDecodeError:
        pass
    try:  # single quotes, True/False/None: a Python literal
        return ast.literal_eval(relaxed)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def _parse_object(raw: str) -> ToolCall | MalformedCall:
    value = _load(raw)
    if value is None:
        # a call cut off by the token limit often misses its closing braces
        for suffix in ("}", "}}", '"}}', '"}'):
            value = _load(raw + suffix)
            if value is not None:
                break
    if not isinstance(value, dict):
        return MalformedCall(raw, 'not a JSON object: write <tool_call>{"name": ..., "arguments": {...}}</tool_call>')
    function = value.get("function")
    if isinstance(function, dict):  # OpenAI style {"function": {"name", "arguments"}}
        value = function
    name = value.get("name", value.get("tool"))
    if not isinstance(name, str) or not name:
        return MalformedCall(raw, 'the call has no "name"')
    arguments = next((value[k] for k in ("arguments", "args", "parameters", "input") if k in value), {})
    if isinstance(arguments, str):
        parsed = _load(arguments)
        arguments = parsed if isinstance(parsed, dict) else arguments
    return ToolCall(name, arguments, raw)
