"""Workers that are threads of this process: no start-up cost, shared memory, no isolation."""

from __future__ import annotations

import os
import queue
import socket
import threading

from posttrain.dispatch.job import Job, JobContext, JobFunction
from posttrain.dispatch.worker import Outcome, run_job


class ThreadWorker:
    def __init__(self, name: str, fn: JobFunction) -> None:
        self.name = name
        self.fn = fn
        self.where = f"{socket.gethostname()}/{os.getpid()}"
        self._jobs: queue.Queue[Job | None] = queue.Queue()
        self._outcome: Outcome | None = None
        self._lock = threading.Lock()
        self._cancel = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"worker-{name}", daemon=True)
        self._thread.start()

    @property
    def pid(self) -> int | None:
        return None

    def ready(self) -> bool:
        return True

    def start(self, job: Job) -> None:
        self._cancel.clear()
        self._jobs.put(job)

    def poll(self) -> Outcome | None:
        with self._lock:
            outcome, self._outcome = self._outcome, None
            return outcome

    def cancel(self) -> None:
        self._cancel.set()

    def alive(self) -> bool:
        return self._thread.is_alive()

    def close(self) -> None:
        self._cancel.set()
        self._jobs.put(None)
        # a worker left inside a torch op while the interpreter shuts down aborts the process
        # ("terminate called without an active exception"): let its job see the cancel and end
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=10)

    def _loop(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            ctx = JobContext(job.id, job.attempts + 1, self.name, self._cancel.is_set)
            outcome = run_job(self.fn, job.payload, ctx)
            with self._lock:
                self._outcome = outcome


class ThreadWorkerFactory:
    kind = "thread"

    def __init__(self, fn: JobFunction) -> None:
        self.fn = fn

    def create(self, name: str) -> ThreadWorker:
        return ThreadWorker(name, self.fn)

    def shutdown(self) -> None:
        pass
