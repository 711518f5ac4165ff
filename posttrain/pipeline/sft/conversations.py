"""Users' chat data for the SFT stage: rows of OpenAI-format conversations, from JSONL (one a
line), parquet or a `datasets` save_to_disk directory (posttrain.pipeline.data_rows).

A row: `messages` (a list of {role, content} objects; assistant messages may carry
`tool_calls`, tool results have role `tool`) and optional `tools` (the function schemas the
chat template shows the model). A row is rendered whole by the model's chat template and
becomes a transcript whose loss mask is 1 on the assistant turns' tokens only (each turn's
content and its end-of-turn tokens; not the header that opens it, which the prompt supplies at
inference) and 0 on the system, user and tool messages.

Bad rows (not JSON, not an object, no `messages` list, a message without a role, no assistant
turn, `tools` not a list) are named by file, row and field and left out, unless strict."""

from __future__ import annotations

from pathlib import Path

from posttrain.errors import PosttrainError
from posttrain.models.tokenizer_fingerprint import tokenizer_fingerprint
from posttrain.pipeline.data_rows import read_data_rows
from posttrain.pipeline.sft.transcripts import Transcript

ROLES = ("system", "user", "assistant", "tool")


def read_conversation_rows(paths: list[Path], strict: bool = False) -> tuple[list[tuple[str, dict]], list[str]]:
    """The good rows of every file as (FILE:ROW, row), and one line per bad row."""
    return read_data_rows(paths, _check, "chat data", "messages", strict)


def _check(row: dict) -> tuple[dict | None, str | None]:
    messages = row.get("messages")
    if not isinstance(messages, list) or not messages:
        return None, "messages: missing or not a list of messages" if messages is None else "messages: not a list"
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            return None, f"messages[{index}].role: expected one of {', '.join(ROLES)}"
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            return None, f"messages[{index}].content: expected text"
        if message["role"] == "assistant" and not (content or "").strip() and not message.get("tool_calls"):
            return None, f"messages[{index}].content: an empty assistant turn"
    if not any(m["role"] == "assistant" for m in messages):
        return None, "messages: no assistant turn to learn from"
    if "tools" in row and not isinstance(row["tools"], list):
        return None, "tools: expected a list of function schemas"
    return row, None


def conversation_transcript(tokenizer, where: str, row: dict) -> Transcript:
    """The conversation as one training segment: everything before the first assistant turn's
    content is the prompt; after it, the assistant turns are trained on and the rest masked."""
    messages, tools = row["messages"], row.get("tools")
    text = _render(tokenizer, messages, tools, opens_assistant=False)
    spans = []  # character ranges of the assistant turns in `text`
    for index, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        start = _render(tokenizer, messages[:index], tools, opens_assistant=True)
        end = _render(tokenizer, messages[: index + 1], tools, opens_assistant=False)
        if not (text.startswith(start) and text.startswith(end)):
            raise PosttrainError(
                f"{where}: messages[{index}]: the chat template renders earlier turns differently once later "
                "ones follow, so the assistant turns cannot be cut out of the conversation"
            )
        spans.append((len(start), len(end)))
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    ids, offsets = list(encoded["input_ids"]), encoded["offset_mapping"]
    mask = [int(any(lo <= first < hi for lo, hi in spans)) for first, _ in offsets]
    split = mask.index(1)
    segment = {"prompt_ids": ids[:split], "completion_ids": ids[split:], "completion_mask": mask[split:]}
    return Transcript(task_id=where, source="chat", segments=[segment])


def chat_transcripts(paths: list[Path], tokenizer, say=print) -> list[Transcript]:
    """The good rows of the chat data files as transcripts (the bad ones were named at the check).
    A row recorded by `posttrain serve --record` with another tokenizer (its `tokenizer`
    fingerprint) is named and left out: its token ids mean other text for this model."""
    rows, _ = read_conversation_rows(paths)
    ours = tokenizer_fingerprint(tokenizer)
    kept = []
    for where, row in rows:
        if row.get("tokenizer") not in (None, ours):
            say(
                f"[sft] chat_data: skipping {where}: tokenizer: recorded with tokenizer {row['tokenizer']}, "
                f"this model's is {ours}"
            )
            continue
        kept.append(conversation_transcript(tokenizer, where, row))
    return kept


def _render(tokenizer, messages: list[dict], tools, opens_assistant: bool) -> str:
    if not messages:  # before the first message: whatever the template puts first (nothing, a BOS)
        return ""
    return tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=opens_assistant, tokenize=False)
