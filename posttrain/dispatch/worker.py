"""What the executor needs from a worker, whatever runs it (a thread, a process, a Ray actor).

A worker runs one job at a time. The executor starts a job on an idle worker and polls it; the
poll reports how the job ended:

    done       the function returned a value
    failed     the function raised (the error text travels back)
    preempted  the function raised Preempted after cancel()
    died       the worker itself is gone (a killed process, a dead actor); the job did not finish
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from posttrain.dispatch.job import Job, JobContext, JobFunction, Preempted

OutcomeKind = Literal["done", "failed", "preempted", "died"]


@dataclass
class Outcome:
    kind: OutcomeKind
    value: Any = None
    error: str | None = None


class Worker(Protocol):
    name: str
    where: str  # where its jobs run, "HOST/PID" (Ray: "NODE_ID/PID"); recorded with each result

    @property
    def pid(self) -> int | None: ...

    def ready(self) -> bool:
        """Whether it can take a job now (a Ray actor waiting to be placed cannot yet)."""

    def start(self, job: Job) -> None: ...

    def poll(self) -> Outcome | None:
        """How the current job ended, once (None while it runs or when idle)."""

    def cancel(self) -> None:
        """Ask the current job to stop (cooperative: it sees ctx.cancelled())."""

    def alive(self) -> bool: ...

    def close(self) -> None: ...


class WorkerFactory(Protocol):
    kind: str

    def create(self, name: str) -> Worker: ...

    def shutdown(self) -> None: ...


def run_job(fn: JobFunction, payload: Any, ctx: JobContext) -> Outcome:
    """Call the job function and turn its ending into an Outcome (used inside every worker)."""
    try:
        return Outcome("done", value=fn(payload, ctx))
    except Preempted:
        return Outcome("preempted")
    except BaseException as exc:  # noqa: BLE001 - every failure of a job is reported, not raised
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        tail = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
        where = f" (at {tail[0].filename}:{tail[0].lineno})" if tail else ""
        return Outcome("failed", error=text + where)
