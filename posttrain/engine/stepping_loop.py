"""The one continuous-batching loop: a thread that owns a stepping engine and steps it over every
generation submitted to it, so that all callers share its batching and its prefix cache.
Training (engine/service/rollout_engine.py: futures, the partial-rollout rule, weight holds) and
serving (serve/engine_worker.py: admission limits, deadlines, asyncio) are adapters over it.

    loop = SteppingLoop(engine, max_running=32)    # at most 32 generations in the engine at once
    loop.start()
    gen = loop.submit(requests, on_done=done, on_tokens=tokens, deadline=time.monotonic() + 600)
    loop.abort(gen)                                # dropped if waiting, else aborted before the next step
    with loop.between_steps() as engine:           # no step runs in here: weight updates
        engine.update_weights(named_tensors, version)
    loop.close()

A stepping engine (the builtin engine; vLLM through serve/vllm_stepper.py) offers add_requests,
step, abort, has_work and completion, a `lock` held around each step, and its policy `version`.

Between two steps the thread admits waiting generations in order (up to max_running), aborts
those asked for and those past their deadline, steps the engine once, and reports:

    on_admit(gen)           its requests are in the engine (gen.seqs)
    on_tokens(gen, update)  a sample's tokens since its last update; the sample's last update
                            carries its Completion (SampleUpdate)
    on_done(gen)            once, when the generation leaves the loop: finished
                            (gen.completions), aborted (gen.aborted; gen.timed_out past its
                            deadline), or failed (gen.error)

An engine step that raises fails the generations in the engine and the loop goes on; an error
anywhere else stops the loop (loop.error) and fails every generation it holds. A generation
submitted to a stopped loop is done at once. Callbacks run on the loop's thread (on_done also on
the caller's, for a generation that never reached the engine) and must not block.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from posttrain.engine.interface import Completion, GenerationRequest
from posttrain.faults import fault_point


@dataclass
class SampleUpdate:
    """One sample's new tokens since its last update; its last update carries its Completion."""

    sample_index: int
    token_ids: list[int]
    logprobs: list[float]
    top_logprobs: list[list[tuple[int, float]]]
    completion: Completion | None = None  # set on the sample's last update
    timed_out: bool = False


@dataclass(eq=False)
class Generation:
    """One caller's batch of requests in the loop."""

    id: int
    requests: list[GenerationRequest]
    on_done: Callable[[Generation], None]
    on_tokens: Callable[[Generation, SampleUpdate], None] | None = None
    on_admit: Callable[[Generation], None] | None = None
    deadline: float | None = None  # time.monotonic(); past it the generation is aborted
    seqs: list = field(default_factory=list)  # the engine's sequences, once admitted
    completions: list[Completion | None] = field(default_factory=list)  # by sample, once finished
    reported: list[int] = field(default_factory=list)  # tokens handed to on_tokens, by sample; -1: all
    restarts: int = 0
    aborted: bool = False
    timed_out: bool = False
    error: BaseException | None = None

    @property
    def finished(self) -> bool:
        return bool(self.seqs) and all(s.is_finished for s in self.seqs)


@dataclass
class LoopUsage:
    """Wall time the loop spent stepping vs waiting for work, since the last reset."""

    busy_s: float = 0.0
    idle_s: float = 0.0
    steps: int = 0

    @property
    def idle_fraction(self) -> float:
        total = self.busy_s + self.idle_s
        return self.idle_s / total if total else 0.0


class SteppingLoop:
    def __init__(self, engine, max_running: int | None = None) -> None:
        self.engine = engine
        self.max_running = max_running
        self.usage = LoopUsage()
        self.error: BaseException | None = None  # what stopped the loop
        self._waiting: deque[Generation] = deque()
        self._running: dict[int, Generation] = {}  # admitted; changed on the loop's thread only
        self._aborts: set[int] = set()
        self._ids = itertools.count()
        self._cond = threading.Condition()
        self._turn_wanted = threading.Event()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._run, name="engine-loop", daemon=True)

    def start(self) -> None:
        self._thread.start()

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    @property
    def running(self) -> int:
        return len(self._running)

    def held(self) -> int:
        """Generations waiting or running, counted at one moment."""
        with self._cond:
            return len(self._waiting) + len(self._running)

    def submit(
        self,
        requests: list[GenerationRequest],
        on_done: Callable[[Generation], None],
        on_tokens: Callable[[Generation, SampleUpdate], None] | None = None,
        on_admit: Callable[[Generation], None] | None = None,
        deadline: float | None = None,
    ) -> Generation:
        gen = Generation(next(self._ids), list(requests), on_done, on_tokens, on_admit, deadline)
        with self._cond:
            stopped = self._closed.is_set() or self.error is not None
            if not stopped:
                self._waiting.append(gen)
                self._cond.notify_all()
        if stopped:
            gen.error, gen.aborted = self.error, self.error is None
            gen.on_done(gen)
        return gen

    def abort(self, gen: Generation) -> None:
        """A waiting generation is dropped now; one in the engine is aborted before the next step
        (its samples finish with finish_reason "abort"). A no-op once it is done."""
        with self._cond:
            dropped = gen in self._waiting
            if dropped:
                self._waiting.remove(gen)
            elif gen.id in self._running:
                self._aborts.add(gen.id)
                self._cond.notify_all()
        if dropped:
            gen.aborted = True
            gen.on_done(gen)

    @contextmanager
    def between_steps(self):
        """The engine between two steps, for weight updates: the loop yields to a waiting turn
        (the engine's lock alone is not fair, and the loop would take it straight back)."""
        self._turn_wanted.set()
        try:
            with self.engine.lock:
                yield self.engine
        finally:
            self._turn_wanted.clear()
            with self._cond:
                self._cond.notify_all()

    def restart_unfinished(self) -> None:
        """Inside between_steps: every generation in the engine with a sample still running starts
        again from its prompts."""
        with self._cond:
            running = list(self._running.values())
        for gen in running:
            if gen.seqs and not gen.finished:
                self.engine.abort(_engine_ids(gen))
                self._add(gen)
                gen.restarts += 1

    def reset_usage(self) -> LoopUsage:
        with self._cond:
            usage, self.usage = self.usage, LoopUsage()
        return usage

    def close(self) -> None:
        """Stop the loop and join its thread; the generations it holds end aborted."""
        if self._closed.is_set():
            return
        self._closed.set()
        with self._cond:
            self._cond.notify_all()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        else:  # never started, or died: nothing else ends what it holds
            self._end_all(None)

    # ---- the loop's thread ----------------------------------------------------------------------

    def _run(self) -> None:
        try:
            self._serve()
        except BaseException as exc:  # noqa: BLE001 - a dead loop must fail its callers, not hang them
            with self._cond:
                self.error = exc
            self._end_all(exc)
            raise
        self._end_all(None)

    def _serve(self) -> None:
        engine = self.engine
        while not self._closed.is_set():
            waited = time.perf_counter()
            with self._cond:
                while not self._closed.is_set() and not (self._waiting or self._aborts or self._running):
                    self._cond.wait(0.5)
                while self._turn_wanted.is_set() and not self._closed.is_set():
                    self._cond.wait(0.01)
                aborts, self._aborts = self._aborts, set()
                admitted = []
                while self._waiting and (self.max_running is None or len(self._running) < self.max_running):
                    gen = self._waiting.popleft()
                    self._running[gen.id] = gen
                    admitted.append(gen)
                self.usage.idle_s += time.perf_counter() - waited
            if self._closed.is_set():
                break
            started = time.perf_counter()
            now = time.monotonic()
            for gen in self._running.values():
                if gen.deadline is not None and now > gen.deadline and not gen.timed_out:
                    gen.timed_out = True
                    aborts.add(gen.id)
            with engine.lock:
                for gen in admitted:
                    self._add(gen)
                    if gen.on_admit is not None:
                        gen.on_admit(gen)
                doomed = [self._running[i] for i in aborts if i in self._running]
                if doomed:
                    engine.abort([i for gen in doomed for i in _engine_ids(gen)])
                    for gen in doomed:
                        gen.aborted = True
                live = [gen for gen in self._running.values() if not gen.finished]
                if live and not engine.has_work():
                    self._fail(live, RuntimeError("calls left without work in the engine"))
                elif engine.has_work():
                    try:
                        fault_point("engine_step")
                        engine.step()
                        self.usage.steps += 1
                        if live:
                            fault_point(f"generation-v{engine.version}")
                    except Exception as exc:  # noqa: BLE001 - fail the generations, keep serving
                        self._fail(live, exc)
                self._report()
            with self._cond:
                self.usage.busy_s += time.perf_counter() - started

    def _add(self, gen: Generation) -> None:
        engine_requests = [replace(r, request_id=f"{gen.id}|{r.request_id}") for r in gen.requests]
        gen.seqs = self.engine.add_requests(engine_requests)
        gen.reported = [0] * len(gen.seqs)
        gen.completions = [None] * len(gen.seqs)

    def _report(self) -> None:
        finished = []
        for gen in self._running.values():
            if gen.on_tokens is not None:
                self._report_tokens(gen)
            if gen.finished:
                finished.append(gen)
        if not finished:
            return
        with self._cond:
            for gen in finished:
                del self._running[gen.id]
        for gen in finished:
            if not gen.aborted:
                gen.completions = [
                    c if c is not None else self._completion(s) for c, s in zip(gen.completions, gen.seqs, strict=True)
                ]
            gen.on_done(gen)

    def _report_tokens(self, gen: Generation) -> None:
        for index, seq in enumerate(gen.seqs):
            sent = gen.reported[index]
            if sent < 0:
                continue  # its last update is out
            if seq.num_completion_tokens <= sent and not seq.is_finished:
                continue
            update = SampleUpdate(
                index,
                seq.completion_token_ids[sent:],
                seq.logprobs[sent:],
                seq.top_logprobs[sent:] if seq.params.top_logprobs else [],
            )
            if seq.is_finished:
                update.completion = gen.completions[index] = self._completion(seq)
                update.timed_out = gen.timed_out
                gen.reported[index] = -1
            else:
                gen.reported[index] = seq.num_completion_tokens
            gen.on_tokens(gen, update)

    def _completion(self, seq) -> Completion:
        completion = self.engine.completion(seq)
        completion.request_id = completion.request_id.split("|", 1)[1]
        return completion

    def _fail(self, gens: list[Generation], exc: BaseException) -> None:
        """Take `gens` out of the engine and end them failed."""
        with self._cond:
            for gen in gens:
                self._running.pop(gen.id, None)
        for gen in gens:
            try:
                self.engine.abort(_engine_ids(gen))
            except Exception:  # noqa: BLE001 - the engine is already in trouble
                pass
            gen.error = exc
            gen.on_done(gen)

    def _end_all(self, exc: BaseException | None) -> None:
        """The loop stopped: every generation it holds ends, failed with `exc` or aborted."""
        with self._cond:
            waiting, self._waiting = list(self._waiting), deque()
            running, self._running = list(self._running.values()), {}
        for gen in running:
            try:
                self.engine.abort(_engine_ids(gen))
            except Exception:  # noqa: BLE001 - the engine may be what failed
                pass
        for gen in [*waiting, *running]:
            gen.error, gen.aborted = exc, exc is None
            gen.on_done(gen)


def _engine_ids(gen: Generation) -> list[str]:
    """The engine's request ids: the caller's, made unique across generations."""
    return [f"{gen.id}|{r.request_id}" for r in gen.requests]
