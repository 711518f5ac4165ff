"""The bookkeeping part of a step's metrics record (rewards and the trainer's statistics are the
rest): the step and policy version, its tasks, timings and throughput, and what the rollout side
reports about the batch.

How a step is timed depends on where generation runs. Rollouts in the background (the
dispatcher) overlap everything else the driver does, so a step lasts from the end of the
previous one and generation throughput is taken over that whole cycle. Inline rollouts happen
inside the step, so a step lasts from its start and generation throughput is taken over the
rollout time alone.
"""

from __future__ import annotations

import time

from posttrain.pipeline.rollout_source import RolloutBatch, RolloutSource


class StepMetrics:
    def __init__(self, rollouts: RolloutSource) -> None:
        self.rollouts = rollouts
        self.loop_started: float | None = None
        self._last_end: float | None = None
        self._step_started = 0.0

    def start_loop(self) -> None:
        self.loop_started = self._last_end = time.perf_counter()

    def loop_s(self) -> float:
        return time.perf_counter() - self.loop_started

    def start_step(self) -> None:
        self._step_started = time.perf_counter()
        if self._last_end is None:
            self._last_end = self._step_started

    def record(self, step: int, batch: RolloutBatch, train_tokens: float) -> dict:
        """Called once the step's update is published."""
        now = time.perf_counter()
        background = self.rollouts.runs_in_background
        step_s = now - (self._last_end if background else self._step_started)
        self._last_end = now
        generated = sum(g.generated_tokens() for g in batch.groups)
        generating_s = step_s if background else batch.waited_s
        return {
            "step": step,
            "policy_version": step,
            "task_ids": batch.task_ids,
            **self.rollouts.batch_metrics(batch, step_s),
            "rollout_s": batch.waited_s,
            "step_s": step_s,
            "rollout_tokens_per_s": generated / max(generating_s, 1e-9),
            "tokens_per_s": (generated + train_tokens) / max(step_s, 1e-9),
        }
