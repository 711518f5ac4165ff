"""The executor: one dispatcher thread between the work queue and a pool of workers.

Each turn of the dispatcher:
  1. collect the outcomes of running jobs: a result goes to `results`; a failure goes back to
     the queue after a backoff, until the retry policy gives up; a preempted job goes back at
     once; a dead worker is closed and replaced, and its job counts as failed;
  2. grow or shrink the pool to the target size (`scale()`, at any time; a busy worker asked
     to leave finishes its job first); with elastic bounds the target follows the work itself
     (elastic.py): up at once under a burst, down when workers sit idle;
  3. hand ready jobs to idle workers, highest priority first, domains by weight;
  4. if a ready job outranks a running one and no worker is idle, preempt the lowest-ranked.
"""

from __future__ import annotations

import itertools
import queue
import threading
import time
from dataclasses import asdict, dataclass, field

from posttrain.dispatch.elastic import ElasticBounds
from posttrain.dispatch.job import Job, JobResult
from posttrain.dispatch.preemption import RunningJob, choose_victim
from posttrain.dispatch.retry import RetryPolicy
from posttrain.dispatch.work_queue import WorkQueue
from posttrain.dispatch.worker import Outcome, Worker, WorkerFactory

_BUSY_POLL_S = 0.005
_IDLE_POLL_S = 0.1
# Workers that die one after another before running a job (an actor whose process cannot start,
# or a cluster that refuses the driver's calls) would otherwise be replaced forever in a busy loop.
STILLBORN_LIMIT = 50


@dataclass
class ExecutorStats:
    submitted: int = 0
    completed: int = 0
    failed: int = 0  # gave up after max_attempts
    retries: int = 0
    preemptions: int = 0
    worker_deaths: int = 0
    workers_started: int = 0
    workers_retired: int = 0  # let go by scale() or for idling (elastic)

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass
class _Slot:
    worker: Worker
    job: Job | None = None
    started: float = 0.0
    preempting: bool = False
    idle_since: float = field(default_factory=time.monotonic)
    ran_job: bool = False


class Executor:
    def __init__(
        self,
        factory: WorkerFactory,
        workers: int = 2,
        retry: RetryPolicy | None = None,
        weights: dict[str, float] | None = None,
        preemption: bool = True,
        elastic: ElasticBounds | None = None,
    ) -> None:
        """`elastic`: let the pool follow the work between its bounds (`workers` is where it starts)."""
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        self.factory = factory
        self.elastic = elastic
        self.retry = retry or RetryPolicy()
        self.queue = WorkQueue(weights)
        self.preemption = preemption
        self.results: queue.Queue[JobResult] = queue.Queue()
        self.stats = ExecutorStats()
        self._target = elastic.clamp(workers) if elastic else workers
        self._slots: list[_Slot] = []
        self._names = itertools.count()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._error: BaseException | None = None
        self._stillborn = 0  # workers in a row that died before running a job
        self._thread = threading.Thread(target=self._run, name="dispatcher", daemon=True)
        self._thread.start()

    # ---- the caller's side -----------------------------------------------------------------

    def submit(self, job: Job) -> None:
        self.check()
        self.queue.put(job)
        with self._lock:
            self.stats.submitted += 1
        self._wake.set()

    def scale(self, workers: int) -> None:
        """Set the pool's size (with elastic bounds: within them, and the work moves it on)."""
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        with self._lock:
            self._target = self.elastic.clamp(workers) if self.elastic else workers
        self._wake.set()

    def set_weights(self, weights: dict[str, float]) -> None:
        self.queue.set_weights(weights)

    @property
    def target_workers(self) -> int:
        return self._target

    def status(self) -> dict:
        """A JSON-able picture: workers (name, pid, running job), queue length, counters."""
        with self._lock:
            workers = [
                {
                    "name": s.worker.name,
                    "pid": s.worker.pid,
                    "where": s.worker.where,  # "" while a Ray actor waits to be placed
                    "job": s.job.id if s.job else None,
                    "running_s": round(time.monotonic() - s.started, 3) if s.job else None,
                }
                for s in self._slots
            ]
            stats = self.stats.to_dict()
        return {
            "kind": self.factory.kind,
            "target_workers": self._target,
            "elastic": asdict(self.elastic) if self.elastic else None,
            "workers": workers,
            "queued": len(self.queue),
            "running": sum(w["job"] is not None for w in workers),
            "weights": self.queue.weights,
            "stats": stats,
        }

    def shutdown(self) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=10)
        with self._lock:
            slots, self._slots = self._slots, []
        for slot in slots:
            slot.worker.cancel()
            slot.worker.close()
        self.factory.shutdown()

    def check(self) -> None:
        """Raise if the dispatcher thread died (its results would never come)."""
        if self._error is not None:
            raise RuntimeError(f"the dispatcher's dispatcher failed: {self._error!r}") from self._error

    # ---- the dispatcher --------------------------------------------------------------------

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                busy = self._turn()
                wait = _BUSY_POLL_S if busy else self._idle_wait()
                self._wake.wait(wait)
                self._wake.clear()
        except BaseException as exc:  # noqa: BLE001 - surfaced to the caller by _check()
            self._error = exc

    def _idle_wait(self) -> float:
        ready_in = self.queue.next_ready_in(time.monotonic())
        return _IDLE_POLL_S if ready_in is None else min(_IDLE_POLL_S, max(ready_in, _BUSY_POLL_S))

    def _turn(self) -> bool:
        self._collect()
        if self.elastic:
            self._follow_the_work()
        self._resize()
        self._assign()
        if self.preemption:
            self._preempt()
        with self._lock:
            return any(s.job is not None for s in self._slots)

    def _collect(self) -> None:
        for slot in list(self._slots):
            outcome = slot.worker.poll() if slot.job is not None else None
            if outcome is None and not slot.worker.alive():
                reason = getattr(slot.worker, "death_reason", "")
                outcome = Outcome(
                    "died",
                    error=f"worker {slot.worker.name} (pid {slot.worker.pid}) died" + (f": {reason}" if reason else ""),
                )
            if outcome is None:
                continue
            job, started = slot.job, slot.started
            with self._lock:
                slot.job, slot.preempting, slot.idle_since = None, False, time.monotonic()
            if outcome.kind == "died":
                self._remove(slot)
                with self._lock:
                    self.stats.worker_deaths += 1
                if job is None and not slot.ran_job:
                    self._count_stillborn(outcome.error or "")
            if job is None:
                continue
            slot.ran_job = True
            self._stillborn = 0
            if outcome.kind == "done":
                with self._lock:
                    self.stats.completed += 1
                self.results.put(
                    JobResult(
                        job,
                        value=outcome.value,
                        worker=slot.worker.name,
                        where=slot.worker.where,
                        duration_s=time.monotonic() - started,
                    )
                )
            elif outcome.kind == "preempted":
                job.preemptions += 1
                with self._lock:
                    self.stats.preemptions += 1
                self.queue.put(job)
            else:
                self._failed(job, outcome.error or outcome.kind, slot.worker.name)

    def _count_stillborn(self, error: str) -> None:
        self._stillborn += 1
        if self._stillborn >= STILLBORN_LIMIT:
            raise RuntimeError(
                f"{self._stillborn} {self.factory.kind} workers in a row died before running a job; the last: {error}"
            )

    def _failed(self, job: Job, error: str, worker: str) -> None:
        job.attempts += 1
        job.errors.append(f"attempt {job.attempts} on {worker}: {error}")
        if self.retry.gives_up(job.attempts):
            with self._lock:
                self.stats.failed += 1
            self.results.put(JobResult(job, error=error, worker=worker))
            return
        job.not_before = time.monotonic() + self.retry.delay(job.attempts)
        with self._lock:
            self.stats.retries += 1
        self.queue.put(job)

    def _remove(self, slot: _Slot, retired: bool = False) -> None:
        # the count moves with the slot list, under one lock: status() never shows a worker
        # gone whose retirement is not counted yet (closing it can take a while)
        with self._lock:
            if slot in self._slots:
                self._slots.remove(slot)
                if retired:
                    self.stats.workers_retired += 1
        try:
            slot.worker.close()
        except Exception:  # noqa: BLE001 - a dead worker may not close cleanly
            pass

    def _follow_the_work(self) -> None:
        now = time.monotonic()
        running = sum(s.job is not None for s in self._slots)
        idle_for = [now - s.idle_since for s in self._slots if s.job is None]
        target = self.elastic.target(self._target, len(self.queue) + running, idle_for)
        if target != self._target:
            with self._lock:
                self._target = target

    def _resize(self) -> None:
        while len(self._slots) < self._target and not self._stop.is_set():
            worker = self.factory.create(f"w{next(self._names)}")
            with self._lock:
                self._slots.append(_Slot(worker))
                self.stats.workers_started += 1
        excess = len(self._slots) - self._target
        idle = sorted((s for s in self._slots if s.job is None), key=lambda s: s.idle_since)
        for slot in idle[: max(excess, 0)]:  # the longest idle first
            self._remove(slot, retired=True)

    def _assign(self) -> None:
        now = time.monotonic()
        for slot in self._slots:
            if slot.job is not None or not slot.worker.ready():
                continue
            job = self.queue.pop(now)
            if job is None:
                return
            with self._lock:
                slot.job, slot.started, slot.preempting = job, time.monotonic(), False
            slot.worker.start(job)

    def _preempt(self) -> None:
        if any((s.job is None and s.worker.ready()) or s.preempting for s in self._slots):
            return  # a free worker, or a preemption already under way
        waiting = self.queue.top_priority(time.monotonic())
        running = [RunningJob(s.job.id, s.job.priority, s.started) for s in self._slots if s.job is not None]
        if waiting is None or not running:
            return
        victim = choose_victim(running, waiting)
        for slot in self._slots:
            if slot.job is not None and slot.job.id == victim:
                slot.preempting = True
                slot.worker.cancel()
