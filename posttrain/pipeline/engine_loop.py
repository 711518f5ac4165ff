"""The engine loop: one thread steps a stepping engine (the builtin one) continuously over the
generation calls submitted to it, so that all callers share its continuous batching and prefix
cache. It knows nothing of sockets: engine_transport.py brings calls in from other processes.

A weight update lands between two engine steps; what happens to generations in flight is the
partial-rollout rule (docs/async.md):

    continue  they go on under the new weights; every token records the policy version that
              sampled it (Completion.token_versions) and its logprob under that policy
    restart   they are aborted and started again from the prompt under the new weights

An engine step that raises fails the calls in flight with EngineError (their jobs are retried
by the scheduler) and the loop goes on serving.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterable
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Literal

import torch

from posttrain.engine.interface import Completion, GenerationRequest
from posttrain.faults import fault_point

PartialRolloutRule = Literal["continue", "restart"]


class EngineError(RuntimeError):
    """The engine failed while serving a call (the call's job should be retried)."""


class CallAborted(RuntimeError):
    """The call was aborted (its caller asked, or it disconnected)."""


@dataclass
class EngineCall:
    """One caller's batch of requests in the loop; `future` holds its completions."""

    call_id: int
    requests: list[GenerationRequest]
    future: Future = field(default_factory=Future)
    seqs: list = field(default_factory=list)
    restarts: int = 0


@dataclass
class EngineUsage:
    """Wall time the engine loop spent stepping vs waiting for work, since the last reset."""

    busy_s: float = 0.0
    idle_s: float = 0.0
    steps: int = 0

    @property
    def idle_fraction(self) -> float:
        total = self.busy_s + self.idle_s
        return self.idle_s / total if total else 0.0


class EngineLoop:
    def __init__(self, engine, partial_rollouts: PartialRolloutRule = "continue") -> None:
        if not hasattr(engine, "add_requests"):
            raise TypeError('the engine service needs a stepping engine (backend = "builtin")')
        self.engine = engine
        self.partial_rollouts = partial_rollouts
        self.usage = EngineUsage()
        self._calls: dict[int, EngineCall] = {}
        self._incoming: list[EngineCall] = []
        self._aborts: set[int] = set()
        self._ids = itertools.count()
        self._cond = threading.Condition()
        self._update_waiting = threading.Event()
        # weight holds (weights_held): while any is open, updates wait here, newest only
        self._hold_lock = threading.Lock()
        self._holds = 0
        self._pending: tuple[list[tuple[str, torch.Tensor]] | None, int] | None = None
        self._closed = threading.Event()
        self._dead: BaseException | None = None
        self._loop_thread = threading.Thread(target=self._loop, name="engine-loop", daemon=True)
        self._loop_thread.start()

    @property
    def version(self) -> int:
        return self.engine.version

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def submit(self, requests: list[GenerationRequest]) -> EngineCall:
        if self._dead is not None:
            raise EngineError(f"the engine loop died: {self._dead!r}")
        call = EngineCall(next(self._ids), list(requests))
        with self._cond:
            self._incoming.append(call)
            self._cond.notify_all()
        return call

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
        with self._cond:
            self._aborts.add(call.call_id)
            self._cond.notify_all()

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
        with self._engine_turn():
            self.engine.update_weights(named_tensors, version)
            if self.partial_rollouts == "restart":
                for call in self._calls.values():
                    if any(not s.is_finished for s in call.seqs):
                        self.engine.abort([_engine_id(call, r) for r in call.requests])
                        call.seqs = self.engine.add_requests(_engine_requests(call))
                        call.restarts += 1

    def set_version(self, version: int) -> None:
        """A step that changed nothing (every group filtered out) still advances the version."""
        with self._hold_lock:
            if self._holds:
                self._pending = (self._pending[0] if self._pending else None, version)
                return
            self._set_version(version)

    def _set_version(self, version: int) -> None:
        with self._engine_turn():
            self.engine.version = version

    def queue_gauges(self) -> dict[str, int]:
        """What waits and what runs now (read without the lock: a scrape's snapshot, not a count
        anything depends on)."""
        scheduler = getattr(self.engine, "scheduler", None)
        return {
            "engine_calls_waiting": len(self._incoming),
            "engine_calls_running": len(self._calls),
            "engine_sequences_waiting": len(scheduler.waiting) if scheduler else 0,
            "engine_sequences_running": len(scheduler.running) if scheduler else 0,
            "policy_version": self.engine.version,
        }

    def reset_usage(self) -> EngineUsage:
        with self._cond:
            usage, self.usage = self.usage, EngineUsage()
        return usage

    def close(self) -> None:
        """Stop the loop and join its thread; the calls in flight fail with CallAborted."""
        if self._closed.is_set():
            return
        self._closed.set()
        with self._cond:
            self._cond.notify_all()
        self._loop_thread.join(timeout=10)

    @contextmanager
    def _engine_turn(self):
        """The engine between two steps: the loop yields to a waiting update (an RLock alone
        is not fair, and the loop would take it straight back)."""
        self._update_waiting.set()
        try:
            with self.engine.lock:
                yield
        finally:
            self._update_waiting.clear()
            with self._cond:
                self._cond.notify_all()

    # ---- the loop's thread ----------------------------------------------------------------------

    def _loop(self) -> None:
        try:
            self._serve_calls()
        except BaseException as exc:  # noqa: BLE001 - a dead loop must fail its callers, not hang them
            self._dead = exc
            with self._cond:
                waiting, self._incoming = self._incoming, []
            for call in waiting:
                call.future.set_exception(EngineError(f"the engine loop died: {exc!r}"))
            self._fail_all(exc)
            raise

    def _serve_calls(self) -> None:
        engine = self.engine
        while not self._closed.is_set():
            waited = time.perf_counter()
            with self._cond:
                while not self._closed.is_set() and not (self._incoming or self._aborts or self._calls):
                    self._cond.wait(0.5)
                while self._update_waiting.is_set() and not self._closed.is_set():
                    self._cond.wait(0.01)
                incoming, self._incoming = self._incoming, []
                aborts, self._aborts = self._aborts, set()
                self.usage.idle_s += time.perf_counter() - waited
            if self._closed.is_set():
                break
            started = time.perf_counter()
            with engine.lock:
                for call in incoming:
                    self._calls[call.call_id] = call
                    call.seqs = engine.add_requests(_engine_requests(call))
                for call_id in aborts:
                    call = self._calls.pop(call_id, None)
                    if call is not None:
                        engine.abort([_engine_id(call, r) for r in call.requests])
                        call.future.set_exception(CallAborted(f"call {call_id} aborted"))
                if self._calls and not engine.has_work():
                    self._fail_all(RuntimeError("calls left without work in the engine"))
                elif engine.has_work():
                    try:
                        fault_point("engine_step")
                        engine.step()
                        self.usage.steps += 1
                        if self._calls:
                            fault_point(f"generation-v{engine.version}")
                    except Exception as exc:  # noqa: BLE001 - fail the calls, keep serving
                        self._fail_all(exc)
                done = [c for c in self._calls.values() if c.seqs and all(s.is_finished for s in c.seqs)]
                for call in done:
                    del self._calls[call.call_id]
                    completions = [_restore_id(engine.completion(s), call) for s in call.seqs]
                    call.future.set_result(completions)
            with self._cond:
                self.usage.busy_s += time.perf_counter() - started
        self._fail_all(CallAborted("engine service closed"))

    def _fail_all(self, exc: BaseException) -> None:
        calls, self._calls = list(self._calls.values()), {}
        error = exc if isinstance(exc, CallAborted) else EngineError(f"engine step failed: {exc!r}")
        for call in calls:
            try:
                self.engine.abort([_engine_id(call, r) for r in call.requests])
            except Exception:  # noqa: BLE001 - the engine is already in trouble
                pass
            if not call.future.done():
                call.future.set_exception(error)


def _engine_id(call: EngineCall, request: GenerationRequest) -> str:
    return f"{call.call_id}|{request.request_id}"


def _engine_requests(call: EngineCall) -> list[GenerationRequest]:
    return [replace(r, request_id=_engine_id(call, r)) for r in call.requests]


def _restore_id(completion: Completion, call: EngineCall) -> Completion:
    completion.request_id = completion.request_id.split("|", 1)[1]
    return completion
