"""The JSON text of a scene answer inside a model's reply, found under size and nesting bounds.

A ```json fenced block wins; else the first balanced {...} object in the reply. The scan is one
linear pass that stops as soon as the object grows past MAX_JSON_CHARS or nests deeper than
MAX_DEPTH, so a crafted reply (a million objects, thousands of nested groups) is refused in
time proportional to the bounds, before any JSON parser or schema sees it."""

from __future__ import annotations

import re

MAX_REPLY_CHARS = 200_000
MAX_JSON_CHARS = 32_000
MAX_DEPTH = 6  # {"objects": [{"size": [...]}]} nests 4 deep

_FENCE = re.compile(r"```(?:json)?[ \t]*\n?")


class ExtractionError(ValueError):
    """The reply holds no JSON object within the bounds; the message says why."""


def extract_json_text(reply: str) -> str:
    if len(reply) > MAX_REPLY_CHARS:
        raise ExtractionError(f"the reply is {len(reply)} characters; at most {MAX_REPLY_CHARS} are read")
    fence = _FENCE.search(reply)
    if fence is not None:
        start = reply.find("{", fence.end())
        if start >= 0:
            return balanced_object(reply, start)
    start = reply.find("{")
    if start < 0:
        raise ExtractionError("the reply holds no JSON object")
    return balanced_object(reply, start)


def balanced_object(text: str, start: int) -> str:
    """The JSON object that opens at text[start], by bracket matching outside strings."""
    depth, in_string, escaped = 0, False, False
    end = min(len(text), start + MAX_JSON_CHARS + 1)
    for i in range(start, end):
        char = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
            if depth > MAX_DEPTH:
                raise ExtractionError(f"the JSON nests deeper than {MAX_DEPTH} levels")
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    if end - start > MAX_JSON_CHARS:
        raise ExtractionError(f"the JSON object is longer than {MAX_JSON_CHARS} characters")
    raise ExtractionError("the JSON object is not closed")
