"""Verifiers for single-reply tasks: reply text + task -> Reward.

Names: `exact`, `numeric`, `math` (math-verify), `reasoning-gym` (the generator's own
`score_answer`), `scene` (the scene domain's validity gate x geometric constraints). Each but
`scene` extracts the answer by the task's `metadata["answer_extraction"]` rule; `scene` finds
the JSON in the reply itself (posttrain.tasks.scene.extraction).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Callable

from posttrain.tasks.answer_extraction import extract_answer
from posttrain.tasks.records import Reward, Task
from posttrain.tasks.scene.verifier import verify_scene

Verifier = Callable[[str, Task], Reward]


def _extracted(text: str, task: Task, default_rule: str) -> str:
    return extract_answer(text, task.metadata.get("answer_extraction", default_rule))


def _normalize(text: str) -> str:
    return " ".join(str(text).strip().lower().split())


def verify_exact(text: str, task: Task) -> Reward:
    answer = _extracted(text, task, "full")
    passed = _normalize(answer) == _normalize(task.answer)
    return Reward(value=float(passed), passed=passed, details={"extracted": answer, "expected": str(task.answer)})


def verify_numeric(text: str, task: Task) -> Reward:
    answer = _extracted(text, task, "last_number")
    try:
        got, expected = float(answer.replace(",", "")), float(str(task.answer).replace(",", ""))
        passed = math.isclose(got, expected, rel_tol=1e-6, abs_tol=1e-9)
    except ValueError:
        passed = False
    return Reward(value=float(passed), passed=passed, details={"extracted": answer, "expected": str(task.answer)})


def verify_math(text: str, task: Task) -> Reward:
    from math_verify import verify

    answer = _extracted(text, task, "full")
    gold = _parse_math(str(task.answer))
    try:
        passed = bool(verify(gold, _parse_math(answer)))
    except Exception as exc:  # math-verify raises on unparsable LaTeX; that is a wrong answer
        return Reward(value=0.0, passed=False, details={"extracted": answer, "error": type(exc).__name__})
    return Reward(value=float(passed), passed=passed, details={"extracted": answer, "expected": str(task.answer)})


def _parse_math(text: str):
    """math-verify reads LaTeX inside $...$ or \\boxed{}; a bare extracted answer is wrapped."""
    from math_verify import parse

    if "$" in text or "\\boxed" in text:
        return parse(text)
    return parse(f"${text}$") or parse(text)


@lru_cache(maxsize=None)
def _gym_scorer(name: str):
    import reasoning_gym

    return reasoning_gym.create_dataset(name, seed=0, size=1)


def verify_reasoning_gym(text: str, task: Task) -> Reward:
    answer = _extracted(text, task, "answer_tag")
    entry = task.metadata["entry"]
    score = float(_gym_scorer(entry["metadata"]["source_dataset"]).score_answer(answer, entry))
    return Reward(value=score, passed=score >= 1.0, details={"extracted": answer, "expected": str(task.answer)})


VERIFIERS: dict[str, Verifier] = {
    "exact": verify_exact,
    "numeric": verify_numeric,
    "math": verify_math,
    "reasoning-gym": verify_reasoning_gym,
    "scene": verify_scene,
}


def get_verifier(name: str) -> Verifier:
    if name not in VERIFIERS:
        raise KeyError(f"unknown verifier {name!r}; choose one of {sorted(VERIFIERS)}")
    return VERIFIERS[name]


def score(text: str, task: Task) -> Reward:
    return get_verifier(task.verifier)(text, task)
