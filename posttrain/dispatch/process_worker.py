"""Workers that are processes: a crash, a leak or a SIGKILL takes down one worker, not the run.

Processes come from a fork server that has already imported the job function's module, so a
replacement for a dead worker starts in milliseconds instead of re-importing torch. A worker
dies with its parent (the fork server goes when this process goes, and each worker asks the
kernel for SIGKILL when the fork server exits), so a killed run leaves no workers behind.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import socket
import sys
from typing import Any

from posttrain.dispatch.job import Job, JobContext, JobFunction
from posttrain.dispatch.worker import Outcome, run_job

_PR_SET_PDEATHSIG = 1


class ProcessWorker:
    def __init__(self, name: str, fn: JobFunction, context) -> None:
        self.name = name
        self._cancel = context.Event()
        self._conn, child = context.Pipe()
        self._proc = context.Process(
            target=_worker_main, args=(child, fn, self._cancel, name), name=f"posttrain-worker-{name}", daemon=True
        )
        self._proc.start()
        child.close()
        self._busy = False
        self._pending: Outcome | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid

    @property
    def where(self) -> str:
        return f"{socket.gethostname()}/{self._proc.pid}"

    def ready(self) -> bool:
        return True

    def start(self, job: Job) -> None:
        self._cancel.clear()
        try:
            self._conn.send((job.id, job.attempts + 1, job.payload))
            self._busy = True
        except (BrokenPipeError, EOFError, OSError) as exc:
            self._pending = Outcome("died", error=f"worker process {self.pid} is gone ({exc})")
        except Exception as exc:  # noqa: BLE001 - an unpicklable payload fails the job, not the executor
            self._pending = Outcome("failed", error=f"payload could not be sent to the worker: {exc}")

    def poll(self) -> Outcome | None:
        if self._pending is not None:
            outcome, self._pending = self._pending, None
            return outcome
        if not self._busy:
            return None
        try:
            if self._conn.poll():
                kind, value, error = self._conn.recv()
                self._busy = False
                return Outcome(kind, value, error)
        except (EOFError, OSError):
            pass
        except Exception as exc:  # noqa: BLE001 - a result that cannot be unpickled fails the job
            self._busy = False
            return Outcome("failed", error=f"result could not be read: {exc}")
        if not self._proc.is_alive():
            self._busy = False
            return Outcome("died", error=f"worker process {self.pid} died (exit code {self._proc.exitcode})")
        return None

    def cancel(self) -> None:
        self._cancel.set()

    def alive(self) -> bool:
        return self._proc.is_alive()

    def close(self) -> None:
        try:
            self._conn.send(None)
        except (BrokenPipeError, EOFError, OSError):
            pass
        self._proc.join(timeout=2)
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join(timeout=2)
        self._conn.close()


class ProcessWorkerFactory:
    kind = "process"

    def __init__(self, fn: JobFunction, preload: list[str] | None = None) -> None:
        self.fn = fn
        self.context = multiprocessing.get_context("forkserver")
        module = getattr(fn, "__module__", None) or getattr(getattr(fn, "func", None), "__module__", None)
        modules = preload if preload is not None else [m for m in [module] if m]
        self.context.set_forkserver_preload([m for m in modules if m != "__main__"])

    def create(self, name: str) -> ProcessWorker:
        return ProcessWorker(name, self.fn, self.context)

    def shutdown(self) -> None:
        pass


def _die_with_parent() -> None:
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        except OSError:
            pass


def _worker_main(conn, fn: JobFunction, cancel, name: str) -> None:
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's to handle
    os.environ["OMP_NUM_THREADS"] = "1"
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
    while True:
        try:
            message: Any = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        job_id, attempt, payload = message
        outcome = run_job(fn, payload, JobContext(job_id, attempt, name, cancel.is_set))
        try:
            conn.send((outcome.kind, outcome.value, outcome.error))
        except (BrokenPipeError, EOFError, OSError):
            return
        except Exception as exc:  # noqa: BLE001 - e.g. an unpicklable result
            conn.send(("failed", None, f"result could not be sent back: {exc}"))
