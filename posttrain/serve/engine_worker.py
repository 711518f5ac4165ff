"""One thread that owns the builtin engine: admits requests, steps the engine, hands tokens back.

Requests from every HTTP client meet here and are batched continuously by the engine: a step
decodes one token (or a verified draft) for every admitted request at once. Admission is
bounded: up to `max_concurrency` requests are in the engine; the next `max_queue` wait in
order; past that `submit` raises `QueueFull` (the server answers 429 with a Retry-After).
Every request has a deadline; one that passes it, or whose client went away (`abort`), is
aborted in the engine between two steps, and its blocks are freed.

Tokens go back to the request's asyncio queue as `SampleUpdate`s (the new tokens of one sample
since the last update, and at the end its Completion), through the event loop's thread-safe
call.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections import deque
from dataclasses import dataclass, field

from posttrain.engine.interface import Completion, GenerationRequest
from posttrain.serve.metrics import ServerMetrics


class QueueFull(Exception):
    def __init__(self, retry_after_s: int) -> None:
        super().__init__(f"the server is at capacity; retry in {retry_after_s} s")
        self.retry_after_s = retry_after_s


@dataclass
class SampleUpdate:
    sample_index: int
    token_ids: list[int]
    logprobs: list[float]
    top_logprobs: list[list[tuple[int, float]]]
    completion: Completion | None = None  # set on the sample's last update
    timed_out: bool = False


@dataclass
class ActiveRequest:
    request: GenerationRequest
    loop: asyncio.AbstractEventLoop
    deadline: float
    updates: asyncio.Queue = field(default_factory=asyncio.Queue)
    arrival: float = field(default_factory=time.monotonic)
    seqs: list = field(default_factory=list)
    sent: list[int] = field(default_factory=list)  # tokens already handed back, per sample
    last_token_at: list[float] = field(default_factory=list)
    first_token_at: float | None = None
    timed_out: bool = False

    @property
    def request_id(self) -> str:
        return self.request.request_id


class EngineWorker:
    def __init__(
        self,
        engine,
        metrics: ServerMetrics,
        max_concurrency: int = 32,
        max_queue: int = 64,
        request_timeout_s: float = 600.0,
    ) -> None:
        self.engine = engine
        self.metrics = metrics
        self.max_concurrency = max_concurrency
        self.max_queue = max_queue
        self.request_timeout_s = request_timeout_s
        self._pending: deque[ActiveRequest] = deque()
        self._active: dict[str, ActiveRequest] = {}
        self._aborts: set[str] = set()
        self._wake = threading.Condition()
        self._stopping = False
        self._ids = itertools.count()
        self._mean_request_s = 5.0  # moving average, for Retry-After
        self._thread = threading.Thread(target=self._run, name="engine-worker", daemon=True)
        self.error: BaseException | None = None

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        with self._wake:
            self._stopping = True
            self._wake.notify()
        self._thread.join(timeout=10)

    @property
    def queue_length(self) -> int:
        return len(self._pending)

    @property
    def running(self) -> int:
        return len(self._active)

    def new_request_id(self, kind: str) -> str:
        return f"{kind}-{next(self._ids)}"

    def submit(self, request: GenerationRequest) -> ActiveRequest:
        """Queue a request (call from the event loop); raises QueueFull past the queue limit."""
        active = ActiveRequest(request, asyncio.get_running_loop(), time.monotonic() + self.request_timeout_s)
        with self._wake:
            if len(self._active) + len(self._pending) >= self.max_concurrency + self.max_queue:
                waves = (len(self._pending) + 1) / max(self.max_concurrency, 1)
                raise QueueFull(max(1, round(waves * self._mean_request_s)))
            self._pending.append(active)
            self._wake.notify()
        return active

    def abort(self, request_id: str) -> None:
        """Drop a queued request, or abort a running one in the engine before its next step."""
        with self._wake:
            queued = [a for a in self._pending if a.request_id == request_id]
            for active in queued:
                self._pending.remove(active)
            if not queued and request_id in self._active:
                self._aborts.add(request_id)
                self._wake.notify()

    # ---- the engine thread ------------------------------------------------------------------

    def _run(self) -> None:
        try:
            while True:
                with self._wake:
                    while not (self._stopping or self._pending or self._active or self._aborts):
                        self._wake.wait()
                    if self._stopping:
                        return
                    aborts, self._aborts = self._aborts, set()
                    admitted = []
                    while self._pending and len(self._active) < self.max_concurrency:
                        active = self._pending.popleft()
                        self._active[active.request_id] = active
                        admitted.append(active)
                now = time.monotonic()
                for active in self._active.values():
                    if now > active.deadline and not active.timed_out:
                        active.timed_out = True
                        aborts.add(active.request_id)
                with self.engine.lock:
                    for active in admitted:
                        active.seqs = self.engine.add_requests([active.request])
                        active.sent = [0] * len(active.seqs)
                        active.last_token_at = [0.0] * len(active.seqs)
                        self.metrics.prompt_tokens += len(active.request.prompt_token_ids)
                    doomed = [rid for rid in aborts if rid in self._active]
                    if doomed:
                        self.engine.abort(doomed)
                    if self.engine.has_work():
                        self.engine.step()
                    self._publish()
        except BaseException as exc:  # the server reports it on /health and fails every request
            self.error = exc
            with self._wake:
                for active in [*self._active.values(), *self._pending]:
                    active.loop.call_soon_threadsafe(active.updates.put_nowait, exc)
                self._active.clear()
                self._pending.clear()
            raise

    def _publish(self) -> None:
        now = time.monotonic()
        finished = []
        for active in self._active.values():
            for index, seq in enumerate(active.seqs):
                sent = active.sent[index]
                if sent < 0:
                    continue  # already finished
                new = seq.num_completion_tokens - sent
                if new <= 0 and not seq.is_finished:
                    continue
                if new > 0:
                    self._time_tokens(active, index, new, now)
                update = SampleUpdate(
                    index,
                    seq.completion_token_ids[sent:],
                    seq.logprobs[sent:],
                    seq.top_logprobs[sent:] if seq.params.top_logprobs else [],
                )
                if seq.is_finished:
                    update.completion = self.engine.completion(seq)
                    update.timed_out = active.timed_out
                    active.sent[index] = -1
                else:
                    active.sent[index] = seq.num_completion_tokens
                active.loop.call_soon_threadsafe(active.updates.put_nowait, update)
            if all(s < 0 for s in active.sent):
                finished.append(active)
        for active in finished:
            del self._active[active.request_id]
            seconds = now - active.arrival
            self._mean_request_s = 0.9 * self._mean_request_s + 0.1 * seconds
            self.metrics.observe(self.metrics.request_latency, seconds)

    def _time_tokens(self, active: ActiveRequest, index: int, new: int, now: float) -> None:
        self.metrics.tokens(new)
        if active.first_token_at is None:
            active.first_token_at = now
            self.metrics.observe(self.metrics.time_to_first_token, now - active.arrival)
        elif active.last_token_at[index]:
            gap = (now - active.last_token_at[index]) / new
            for _ in range(new):
                self.metrics.observe(self.metrics.inter_token_latency, gap)
        active.last_token_at[index] = now
