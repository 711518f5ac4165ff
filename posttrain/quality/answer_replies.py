"""Replies the answer inspection scores: the reference answer written as the domain's answer
extraction rule reads it, and the probes a verifier must refuse.

    empty      a reply with nothing in it
    constant   "0", "yes", "no", and the domain's most common reference answer
    garbage    random text, a very long string, the prompt echoed back

A probe counts only on items whose reference differs from what the probe says (as text or as
a number), so a constant that happens to be an item's right answer is not held against the
verifier.
"""

from __future__ import annotations

import random
import string

from posttrain.tasks.records import Task

DEFAULT_RULES = {"exact": "full", "numeric": "last_number", "math": "full", "reasoning-gym": "answer_tag"}
LONG_REPLY_CHARS = 8_000
CONSTANTS = ("0", "yes", "no")


def extraction_rule(task: Task) -> str:
    """The rule the task's verifier reads its answer with."""
    return task.metadata.get("answer_extraction") or DEFAULT_RULES.get(task.verifier, "full")


def as_reply(answer: object, task: Task) -> str:
    """`answer` written so that the task's answer extraction finds exactly it."""
    text = str(answer)
    rule = extraction_rule(task)
    if rule == "answer_tag":
        return f"<answer>{text}</answer>"
    if rule == "boxed":
        return f"\\boxed{{{text}}}"
    return text


def normalized(text: object) -> str:
    return " ".join(str(text).strip().lower().split())


def same_answer(a: object, b: object) -> bool:
    """The same text (case and spacing aside) or the same number ("0" and "0.0")."""
    if normalized(a) == normalized(b):
        return True
    try:
        return float(str(a).replace(",", "")) == float(str(b).replace(",", ""))
    except ValueError:
        return False


def probe_answers(most_common: str | None, seed: int = 0) -> dict[str, str]:
    """Probe name -> the answer it gives (before as_reply wraps it); `echo` is filled per task."""
    rng = random.Random(seed)
    noise = " ".join("".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 9))) for _ in range(12))
    probes = {"empty": ""}
    probes |= {f"constant:{c}": c for c in CONSTANTS}
    if most_common is not None and normalized(most_common) not in CONSTANTS:
        probes["constant:most_common_reference"] = most_common
    probes["garbage:random_text"] = noise
    probes["garbage:long_string"] = ("lorem ipsum 0123456789 " * (LONG_REPLY_CHARS // 23 + 1))[:LONG_REPLY_CHARS]
    probes["garbage:echo_prompt"] = ""
    return probes


def prompt_text(task: Task) -> str:
    if isinstance(task.instruction, str):
        return task.instruction
    return "\n".join(m.get("content", "") for m in task.instruction)


def probe_reply(name: str, answer: str, task: Task) -> str:
    """The reply a probe sends for `task`: the echo probe repeats the prompt, unwrapped as well
    as in the answer format, so a verifier reading either way sees it."""
    if name == "garbage:echo_prompt":
        prompt = prompt_text(task)
        return prompt + "\n" + as_reply(prompt, task)
    if name == "empty":
        return ""
    return as_reply(answer, task)
