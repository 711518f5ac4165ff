"""Scoring replies for the answer inspection in a worker process with a time and memory cap.

A probe answer is meant to break things: reasoning-gym's rubiks_cube verifier spends seconds
and gigabytes on a reply of a few thousand characters. Every score the inspection asks for
runs in one worker (custom_rewards.RewardWorker, capped at `MEMORY_MB` of address space); a
call that outlives `TIMEOUT_S` or kills the worker is the finding, not the end of the
inspection.
"""

from __future__ import annotations

from posttrain.tasks.custom_rewards import RewardFunction, RewardFunctionError, RewardWorker
from posttrain.tasks.records import Reward, Task

MEMORY_MB = 6144
TIMEOUT_S = 30.0
SCORE = RewardFunction("posttrain.quality.scoring_worker", "score_in_worker")


class ScoringFailed(Exception):
    """The verifier raised, hung or died on a reply; the message says which."""


def score_in_worker(task: Task, reply: str) -> dict:
    """Runs in the worker: the verifier's Reward as a dict."""
    from posttrain.tasks.verifiers import score

    return score(reply, task).model_dump()


class Scorer:
    """score(reply, task) in a capped worker, started on first use; close() ends it."""

    def __init__(self, timeout_s: float = TIMEOUT_S, memory_mb: int = MEMORY_MB) -> None:
        self.worker = RewardWorker(memory_mb=memory_mb)
        self.timeout_s = timeout_s

    def __call__(self, reply: str, task: Task) -> Reward:
        try:
            return Reward.model_validate(self.worker.call(SCORE, task, reply, self.timeout_s))
        except RewardFunctionError as exc:
            raise ScoringFailed(str(exc)) from None

    def close(self) -> None:
        self.worker.close()

    def __enter__(self) -> Scorer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
