"""The rollout side of the RL driver: where each step's batch comes from and where the trainer's
new weights go.

    rollouts.start(trained_through)              # before the first step of this session
    batch = rollouts.next_batch(step)            # blocks until the step's groups are ready
    rollouts.publish(named_params, version)      # None when the step left the policy unchanged

Two implementations: InlineRollouts (inline_rollouts.py) generates each step's groups in the
driver's thread in one engine call, for the hf engine; ScheduledRollouts (scheduled_rollouts.py)
runs rollout jobs on the dispatcher's workers against the engine service, synchronous at eta = 0
and asynchronous at eta >= 1.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

import torch

from posttrain.engine.interface import InferenceEngine


@dataclass
class RolloutBatch:
    step: int
    groups: list[Any]  # RolloutGroup | EpisodeGroup, in training order
    task_ids: list[str]  # the step's tasks, as its metrics record lists them
    waited_s: float  # how long the trainer waited for the batch


class RolloutSource(Protocol):
    engine: InferenceEngine  # what held-out evaluations run through
    runs_in_background: bool  # generation overlaps the rest of the step (see step_metrics.py)
    interrupt: threading.Event | None  # set: a wait for a batch ends with RunPreempted

    def start(self, trained_through: int) -> None: ...

    def next_batch(self, step: int) -> RolloutBatch: ...

    def publish(self, named_params: Iterable[tuple[str, torch.Tensor]] | None, version: int) -> None: ...

    def batch_metrics(self, batch: RolloutBatch, step_s: float) -> dict[str, Any]:
        """What this side adds to the step's metrics record."""
        ...

    def drain(self, until: float) -> None:
        """On a preemption notice: let work in flight finish until time.monotonic() = `until`."""
        ...

    def state_dict(self) -> dict[str, Any] | None:
        """What a checkpoint keeps for a lossless resume (None: nothing)."""
        ...

    def summary(self, train_loop_s: float, steps_this_session: int) -> dict[str, Any]:
        """What this side adds to summary.json."""
        ...

    def close(self) -> None: ...
