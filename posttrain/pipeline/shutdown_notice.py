"""SIGTERM as a preemption notice: what a cloud sends before it reclaims a spot node.

The handler only records the notice; the driver acts on it at the next safe point (between
steps, or while it waits for rollouts) and saves the run's in-flight state. A watchdog bounds
the whole: when `grace_s` runs out the process exits at once, leaving what was written whole
(checkpoints are renamed into place and published manifest last, so nothing half written looks
complete).

Exit codes: EXIT_PREEMPTED (75, EX_TEMPFAIL: "try again") once the state is saved and
published; EXIT_GRACE_RAN_OUT (143, as a process killed by SIGTERM) when the grace ran out
before that: the last checkpoint saved whole is what a resume starts from.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

EXIT_PREEMPTED = 75
EXIT_GRACE_RAN_OUT = 128 + signal.SIGTERM


class RunPreempted(Exception):
    """The run stopped on a preemption notice; its message says what was saved and where."""


class ShutdownNotice:
    """`with ShutdownNotice(grace_s) as notice:` SIGTERM sets `notice.event` (and starts the
    watchdog) while the block runs; the previous handler comes back after it. Outside the main
    thread, where Python cannot take signals, it does nothing."""

    def __init__(self, grace_s: float) -> None:
        self.grace_s = grace_s
        self.event = threading.Event()
        self.received_at: float | None = None
        self.saved = False  # the in-flight state is written and published: the rest is closing
        self._finished = threading.Event()
        self._previous = None

    def __enter__(self) -> ShutdownNotice:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGTERM, self._on_signal)
        return self

    def __exit__(self, *exc) -> None:
        self._finished.set()
        if self._previous is not None:
            signal.signal(signal.SIGTERM, self._previous)

    @property
    def received(self) -> bool:
        return self.event.is_set()

    def deadline(self, share: float = 1.0) -> float:
        """time.monotonic() at which `share` of the grace has passed since the notice."""
        assert self.received_at is not None
        return self.received_at + share * self.grace_s

    def elapsed_s(self) -> float:
        return time.monotonic() - (self.received_at or time.monotonic())

    def _on_signal(self, signum, frame) -> None:
        if self.event.is_set():
            return  # a second notice changes nothing: the watchdog already runs
        self.received_at = time.monotonic()
        self.event.set()
        print(
            f"SIGTERM: preemption notice; saving the run's in-flight state (grace {self.grace_s:g} s)",
            file=sys.stderr,
            flush=True,
        )
        threading.Thread(target=self._watch, name="preemption-watchdog", daemon=True).start()

    def _watch(self) -> None:
        if self._finished.wait(self.grace_s):
            return
        if self.saved:
            message, code = "the state was saved and published; closing took too long", EXIT_PREEMPTED
        else:
            message = "exiting; a resume starts from the last checkpoint saved whole (nothing half written counts)"
            code = EXIT_GRACE_RAN_OUT
        print(f"preemption grace ({self.grace_s:g} s) ran out: {message}", file=sys.stderr, flush=True)
        os._exit(code)
