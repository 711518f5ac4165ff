"""Verifiers for single-reply tasks: reply text + task -> Reward.

Names: `exact`, `numeric`, `math` (math-verify), `reasoning-gym` (the generator's own
`score_answer`, run in the reward worker), `scene` (the scene domain's validity gate x
geometric constraints). Each but `scene` extracts the answer by the task's
`metadata["answer_extraction"]` rule; `scene` finds the JSON in the reply itself (posttrain.tasks.scene.extraction).

`python:module:function` is the user's own function (custom_rewards.py); a task whose verifier
is `weighted` is scored by each of `metadata["rewards"]` ([name, weight] pairs) and gets their
weighted sum, passing when every one passes (TRL's reward_funcs with reward_weights). A user
function or reasoning-gym scorer that raises, hangs or returns something other than a number
in [0, 1] scores 0 for that sample, with the message in `details["reward_errors"]`; the run goes on and counts them.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from posttrain.tasks import gym_entries
from posttrain.tasks.answer_extraction import extract_answer
from posttrain.tasks.custom_rewards import (
    DEFAULT_REWARD_TIMEOUT_S,
    PREFIX,
    RewardFunction,
    RewardFunctionError,
    call_reward_function,
    parse_reward_function,
)
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


GYM_SCORER = RewardFunction("posttrain.tasks.gym_scoring", "score_entry")
DEFAULT_GYM_TIMEOUT_S = 30.0  # the worker's first call imports reasoning-gym (2-5 s)


def verify_reasoning_gym(text: str, task: Task) -> Reward:
    """The generator's own scorer, in the reward worker: a scorer that raises or hangs scores 0
    with the reason in `details["reward_errors"]` (counted per domain in the step's record),
    never an infrastructure failure and never the run's end."""
    answer = _extracted(text, task, "answer_tag")
    details = {"extracted": answer, "expected": str(task.answer)}
    record = task.model_dump(include={"id", "domain", "answer", "metadata"})
    timeout = float(task.metadata.get("reward_timeout_s", DEFAULT_GYM_TIMEOUT_S))
    try:
        score, _ = call_reward_function(GYM_SCORER, record, answer, timeout)
    except RewardFunctionError as exc:
        dataset = gym_entries.decode(task.metadata["entry"]["metadata"]).get("source_dataset", "?")
        details["reward_errors"] = [f"reasoning-gym:{dataset}: {exc}"]
        return Reward(value=0.0, passed=False, details=details)
    return Reward(value=score, passed=score >= 1.0, details=details)


VERIFIERS: dict[str, Verifier] = {
    "exact": verify_exact,
    "numeric": verify_numeric,
    "math": verify_math,
    "reasoning-gym": verify_reasoning_gym,
    "scene": verify_scene,
}


WEIGHTED = "weighted"


def get_verifier(name: str) -> Verifier:
    if name.startswith(PREFIX):
        return lambda text, task: verify_with_function(name, text, task)
    if name not in VERIFIERS:
        raise KeyError(f"unknown verifier {name!r}; choose one of {sorted(VERIFIERS)} or python:<module>:<function>")
    return VERIFIERS[name]


def verify_with_function(spec: str, text: str, task: Task) -> Reward:
    """The user's function on (task as a dict, completion text); a failure is this sample's
    reward error, not the run's."""
    reward = parse_reward_function(spec, task.metadata.get("reward_search_path"))
    record = task.model_dump(include={"id", "domain", "instruction", "answer", "metadata"})
    timeout = float(task.metadata.get("reward_timeout_s", DEFAULT_REWARD_TIMEOUT_S))
    try:
        value, extras = call_reward_function(reward, record, text, timeout)
    except RewardFunctionError as exc:
        return Reward(value=0.0, passed=False, details={"reward_errors": [f"{spec}: {exc}"]})
    return Reward(value=value, passed=value >= 1.0, details={"reward_extras": extras} if extras else {})


def verify_weighted(text: str, task: Task) -> Reward:
    value, passed, parts, errors, extras = 0.0, True, {}, [], {}
    for name, weight in task.metadata["rewards"]:
        reward = get_verifier(name)(text, task)
        value += weight * reward.value
        passed = passed and reward.passed
        parts[name] = reward.value
        errors += reward.details.get("reward_errors", [])
        extras.update(reward.details.get("reward_extras", {}))
    details = {"rewards": parts}
    if errors:
        details["reward_errors"] = errors
    if extras:
        details["reward_extras"] = extras
    return Reward(value=value, passed=passed, details=details)


def score(text: str, task: Task) -> Reward:
    if task.verifier == WEIGHTED:
        return verify_weighted(text, task)
    return get_verifier(task.verifier)(text, task)
