"""The server's side of the engine loop (engine/stepping_loop.py): admission, deadlines, and
tokens handed back to asyncio.

Requests from every HTTP client meet in the one loop that steps the engine and are batched
continuously: a step decodes one token (or a verified draft) for every admitted request at once.
Admission is bounded: up to `max_concurrency` requests are in the engine; the next `max_queue`
wait in order; past that `submit` raises `QueueFull` (the server answers 429 with a
Retry-After). Every request has a deadline; one that passes it, or whose client went away
(`abort`), is aborted in the engine between two steps, and its blocks are freed.

Tokens go back to the request's asyncio queue as `SampleUpdate`s (the new tokens of one sample
since the last update, and at the end its Completion), through the event loop's thread-safe
call. An engine failure goes there instead, and /health reports the first one.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from dataclasses import dataclass, field

from posttrain.engine.interface import GenerationRequest
from posttrain.engine.stepping_loop import Generation, SampleUpdate, SteppingLoop
from posttrain.serve.metrics import ServerMetrics


class QueueFull(Exception):
    def __init__(self, retry_after_s: int) -> None:
        super().__init__(f"the server is at capacity; retry in {retry_after_s} s")
        self.retry_after_s = retry_after_s


@dataclass
class ActiveRequest:
    request: GenerationRequest
    loop: asyncio.AbstractEventLoop
    deadline: float
    updates: asyncio.Queue = field(default_factory=asyncio.Queue)
    arrival: float = field(default_factory=time.monotonic)
    generation: Generation | None = None
    last_token_at: dict[int, float] = field(default_factory=dict)  # by sample
    first_token_at: float | None = None

    @property
    def request_id(self) -> str:
        return self.request.request_id

    def put(self, item: SampleUpdate | BaseException) -> None:
        self.loop.call_soon_threadsafe(self.updates.put_nowait, item)


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
        self.loop = SteppingLoop(engine, max_running=max_concurrency)
        self._requests: dict[str, ActiveRequest] = {}  # by request id, until done
        self._admission = threading.Lock()
        self._ids = itertools.count()
        self._mean_request_s = 5.0  # moving average, for Retry-After
        self._failure: BaseException | None = None

    def start(self) -> None:
        self.loop.start()

    def stop(self) -> None:
        self.loop.close()

    @property
    def error(self) -> BaseException | None:
        return self.loop.error or self._failure

    @property
    def queue_length(self) -> int:
        return self.loop.waiting

    @property
    def running(self) -> int:
        return self.loop.running

    @property
    def open_requests(self) -> int:
        """Requests submitted and not yet done (queued, running, or finishing)."""
        return len(self._requests)

    def new_request_id(self, kind: str) -> str:
        return f"{kind}-{next(self._ids)}"

    def submit(self, request: GenerationRequest) -> ActiveRequest:
        """Queue a request (call from the event loop); raises QueueFull past the queue limit."""
        active = ActiveRequest(request, asyncio.get_running_loop(), time.monotonic() + self.request_timeout_s)
        with self._admission:
            if self.loop.held() >= self.max_concurrency + self.max_queue:
                waves = (self.loop.waiting + 1) / max(self.max_concurrency, 1)
                raise QueueFull(max(1, round(waves * self._mean_request_s)))
            self._requests[request.request_id] = active
            active.generation = self.loop.submit(
                [request],
                on_done=lambda gen: self._done(active, gen),
                on_tokens=lambda gen, update: self._tokens(active, update),
                on_admit=lambda gen: self._admitted(active),
                deadline=active.deadline,
            )
        return active

    def abort(self, request_id: str) -> None:
        """Drop a queued request, or abort a running one in the engine before its next step."""
        active = self._requests.get(request_id)
        if active is not None and active.generation is not None:
            self.loop.abort(active.generation)

    # ---- on the engine loop's thread ----------------------------------------------------------

    def _admitted(self, active: ActiveRequest) -> None:
        self.metrics.prompt_tokens += len(active.request.prompt_token_ids)

    def _tokens(self, active: ActiveRequest, update: SampleUpdate) -> None:
        if update.token_ids:
            self._time_tokens(active, update.sample_index, len(update.token_ids), time.monotonic())
        active.put(update)

    def _done(self, active: ActiveRequest, gen: Generation) -> None:
        self._requests.pop(active.request_id, None)
        if gen.error is not None:
            self._failure = self._failure or gen.error
            active.put(gen.error)
        elif gen.seqs and not self.loop.closed:  # every sample was handed back
            seconds = time.monotonic() - active.arrival
            self._mean_request_s = 0.9 * self._mean_request_s + 0.1 * seconds
            self.metrics.observe(self.metrics.request_latency, seconds)

    def _time_tokens(self, active: ActiveRequest, index: int, new: int, now: float) -> None:
        self.metrics.tokens(new)
        if active.first_token_at is None:
            active.first_token_at = now
            self.metrics.observe(self.metrics.time_to_first_token, now - active.arrival)
        elif active.last_token_at.get(index):
            gap = (now - active.last_token_at[index]) / new
            for _ in range(new):
                self.metrics.observe(self.metrics.inter_token_latency, gap)
        active.last_token_at[index] = now
