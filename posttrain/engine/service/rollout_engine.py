"""The rollout engine: the stepping loop (engine/stepping_loop.py) as training uses it. Calls
are futures, and the trainer's weights land between two engine steps; it knows nothing of
sockets (transport.py brings calls in from other processes).

What happens to generations in flight at a weight update is the partial-rollout rule
(docs/async.md):

    continue  they go on under the new weights; every token records the policy version that
              sampled it (Completion.token_versions) and its logprob under that policy
    restart   they are aborted and started again from the prompt under the new weights

An engine step that raises fails the calls in flight with EngineError (their jobs are retried
by the dispatcher) and the loop goes on serving.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

import torch

from posttrain.engine.interface import Completion, GenerationRequest
from posttrain.engine.stepping_loop import Generation, LoopUsage, SteppingLoop

PartialRolloutRule = Literal["continue", "restart"]


class EngineError(RuntimeError):
    """The engine failed while serving a call (the call's job should be retried)."""


class CallAborted(RuntimeError):
    """The call was aborted (its caller asked, or it disconnected)."""


@dataclass(eq=False)
class EngineCall:
    """One caller's batch of requests in the loop; `future` holds its completions."""

    generation: Generation
    future: Future = field(default_factory=Future)


class RolloutEngine:
    def __init__(self, engine, partial_rollouts: PartialRolloutRule = "continue") -> None:
        if not hasattr(engine, "add_requests"):
            raise TypeError('the engine service needs a stepping engine (backend = "builtin")')
        self.engine = engine
        self.partial_rollouts = partial_rollouts
        self.loop = SteppingLoop(engine)
        # weight holds (weights_held): while any is open, updates wait here, newest only
        self._hold_lock = threading.Lock()
        self._holds = 0
        self._pending: tuple[list[tuple[str, torch.Tensor]] | None, int] | None = None
        self.loop.start()

    @property
    def version(self) -> int:
        return self.engine.version

    def submit(self, requests: list[GenerationRequest]) -> EngineCall:
        future = Future()
        return EngineCall(self.loop.submit(requests, on_done=lambda gen: self._settle(future, gen)), future)

    def _settle(self, future: Future, gen: Generation) -> None:
        if gen.error is not None:
            what = "the engine loop died" if self.loop.error is not None else "engine step failed"
            future.set_exception(EngineError(f"{what}: {gen.error!r}"))
        elif gen.aborted:
            future.set_exception(CallAborted("engine service closed" if self.loop.closed else f"call {gen.id} aborted"))
        else:
            future.set_result(gen.completions)

    def generate(self, requests: list[GenerationRequest], attempts: int = 3) -> list[Completion]:
        """In-process use (held-out evaluation in the driver): the InferenceEngine interface.
        A failed engine step is retried (a call is deterministic given its seeds)."""
        for attempt in range(1, attempts + 1):
            try:
                return self.submit(requests).future.result()
            except EngineError:
                if attempt == attempts:
                    raise
        raise AssertionError("unreachable")

    def abort(self, call: EngineCall) -> None:
        self.loop.abort(call.generation)

    @contextmanager
    def weights_held(self):
        """Generation under one policy version while training goes on: inside, weight updates
        are kept aside (a copy of the newest) and the engine keeps the weights it has; they are
        applied when the last hold ends. Rollouts generated meanwhile carry the older version,
        so the staleness bound still holds; the trainer waits only if the hold outlasts it."""
        with self._hold_lock:
            self._holds += 1
        try:
            yield self.engine.version
        finally:
            with self._hold_lock:  # applied under the lock: a new hold starts on the new weights
                self._holds -= 1
                pending = self._pending if self._holds == 0 else None
                if pending is not None:
                    self._pending = None
                    named, version = pending
                    if named is None:
                        self._set_version(version)
                    else:
                        self._update_weights(named, version)

    def update_weights(self, named_tensors: Iterable[tuple[str, torch.Tensor]], version: int) -> None:
        """Copy the trainer's weights into the engine between two steps; apply the rule."""
        with self._hold_lock:
            if self._holds:
                self._pending = ([(n, t.detach().clone()) for n, t in named_tensors], version)
                return
            self._update_weights(named_tensors, version)

    def _update_weights(self, named_tensors: Iterable[tuple[str, torch.Tensor]], version: int) -> None:
        with self.loop.between_steps() as engine:
            engine.update_weights(named_tensors, version)
            if self.partial_rollouts == "restart":
                self.loop.restart_unfinished()

    def set_version(self, version: int) -> None:
        """A step that changed nothing (every group filtered out) still advances the version."""
        with self._hold_lock:
            if self._holds:
                self._pending = (self._pending[0] if self._pending else None, version)
                return
            self._set_version(version)

    def _set_version(self, version: int) -> None:
        with self.loop.between_steps() as engine:
            engine.version = version

    def queue_gauges(self) -> dict[str, int]:
        """What waits and what runs now (read without the lock: a scrape's snapshot, not a count
        anything depends on)."""
        scheduler = getattr(self.engine, "scheduler", None)
        return {
            "engine_calls_waiting": self.loop.waiting,
            "engine_calls_running": self.loop.running,
            "engine_sequences_waiting": len(scheduler.waiting) if scheduler else 0,
            "engine_sequences_running": len(scheduler.running) if scheduler else 0,
            "policy_version": self.engine.version,
        }

    def reset_usage(self) -> LoopUsage:
        return self.loop.reset_usage()

    def close(self) -> None:
        """Stop the loop and join its thread; the calls in flight fail with CallAborted."""
        self.loop.close()
