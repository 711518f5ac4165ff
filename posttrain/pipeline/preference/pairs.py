"""Preference pairs from JSONL or parquet files or `datasets` save_to_disk directories
(posttrain.pipeline.data_rows), and their tokens under the model's chat template.

A row: `prompt`, `chosen`, `rejected`. The prompt is text (one user message) or a
list of chat messages; each response is text (one assistant message) or a list of assistant
messages. A bad row is named by file, row and field; the rest are used, unless strict.

Tokens: the prompt rendered with the generation prompt (the assistant's header), and each
response as what prompt + response adds to it, rendered whole by the chat template; the
response starts where the two renderings part (as TRL's DPOTrainer cuts them), so its tokens
are exactly the ones the model would produce after the prompt."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from posttrain.errors import PosttrainError
from posttrain.models.token_ids import chat_prompt_ids, token_ids
from posttrain.pipeline.data_rows import read_data_rows

SIDES = ("prompt", "chosen", "rejected")


@dataclass(frozen=True)
class PreferenceRow:
    where: str  # FILE:ROW
    prompt: list[dict]
    chosen: list[dict]
    rejected: list[dict]


@dataclass(frozen=True)
class PreferencePair:
    where: str
    prompt_ids: list[int]
    chosen_ids: list[int]
    rejected_ids: list[int]


def read_preference_rows(paths: list[Path], strict: bool = False) -> tuple[list[PreferenceRow], list[str]]:
    """The good rows of every file, and one line per bad row (`FILE:ROW: field: reason`).
    strict: a bad row is an error (all of them in its message)."""
    found, problems = read_data_rows(paths, _check_row, "preference data", "prompt, chosen and rejected", strict)
    if not found:
        raise PosttrainError("no usable preference rows" + "".join(f"\n{p}" for p in problems[:20]))
    return [PreferenceRow(where, *sides) for where, sides in found], problems


def _check_row(data: dict) -> tuple[tuple[list[dict], ...] | None, str | None]:
    """(prompt, chosen, rejected) as message lists, or what is wrong with the row."""
    sides = []
    for field in SIDES:
        role = "user" if field == "prompt" else "assistant"
        messages, problem = _messages(data.get(field), role, field == "prompt")
        if problem:
            return None, f"{field}: {problem}"
        sides.append(messages)
    return tuple(sides), None


def _messages(value, role: str, any_role: bool) -> tuple[list[dict] | None, str | None]:
    """Text as one message of `role`, or a list of chat messages (a response: assistant ones)."""
    if value is None:
        return None, "missing"
    if isinstance(value, str):
        return ([{"role": role, "content": value}], None) if value.strip() else (None, "empty")
    if isinstance(value, dict):  # one message
        value = [value]
    if not isinstance(value, list):
        return None, f"expected text or a list of messages, got {type(value).__name__}"
    if not value:
        return None, "empty"
    for index, message in enumerate(value):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            return None, f"[{index}]: not a message (an object with role and content)"
        if not any_role and message["role"] != "assistant":
            return None, f"[{index}]: role {message['role']!r}; a response holds assistant messages"
        content = message.get("content")
        if not message.get("tool_calls") and (not isinstance(content, str) or not content.strip()):
            return None, f"[{index}]: empty content"
    return value, None


def tokenize_pair(tokenizer, row: PreferenceRow) -> PreferencePair:
    prompt = chat_prompt_ids(tokenizer, row.prompt)
    chosen = _rendered(tokenizer, row.prompt + row.chosen)
    rejected = _rendered(tokenizer, row.prompt + row.rejected)
    start = min(_common_prefix(prompt, chosen), _common_prefix(prompt, rejected))
    return PreferencePair(row.where, prompt[:start], chosen[start:], rejected[start:])


def _rendered(tokenizer, messages: list[dict]) -> list[int]:
    return token_ids(tokenizer.apply_chat_template(messages, add_generation_prompt=False, tokenize=True))


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
