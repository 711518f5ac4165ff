"""Pull the final answer out of a model's reply, by a rule the domain names."""

from __future__ import annotations

import re

from posttrain.config import EXTRACTORS

_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)
_NUMBER = re.compile(r"-?\d+(?:,\d{3})*(?:\.\d+)?")
_ANSWER_PREFIX = re.compile(r"^\s*(?:the\s+)?(?:final\s+)?answer\s*(?:is)?\s*[:=]?\s*", re.IGNORECASE)


def extract_answer(text: str, rule: str) -> str:
    if rule == "full":
        return text.strip()
    if rule == "last_line":
        lines = [line for line in text.strip().splitlines() if line.strip()]
        return _ANSWER_PREFIX.sub("", lines[-1]).strip().rstrip(".") if lines else ""
    if rule == "answer_tag":
        found = _TAG.findall(text)
        return found[-1].strip() if found else ""
    if rule == "boxed":
        return _last_boxed(text)
    if rule == "last_number":
        found = _NUMBER.findall(text)
        return found[-1].replace(",", "") if found else ""
    raise ValueError(f"unknown answer extraction rule {rule!r}; choose one of {EXTRACTORS}")


def _last_boxed(text: str) -> str:
    start = text.rfind("\\boxed{")
    if start < 0:
        return ""
    depth, i = 1, start + len("\\boxed{")
    begin = i
    while i < len(text) and depth:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return text[begin : i - 1].strip() if depth == 0 else ""
