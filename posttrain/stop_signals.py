"""SIGTERM handled as Ctrl-C is: for a command whose Ctrl-C path already says what was saved
(`posttrain eval`), `kill PID` and a scheduler's stop take that same path, and the exit status
then says which signal it was (143, as a process killed by SIGTERM; Ctrl-C's is 130). Training
has its own SIGTERM handling (pipeline/shutdown_notice.py: a preemption notice, saved)."""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager

EXIT_INTERRUPTED = 128 + signal.SIGINT  # 130
EXIT_TERMINATED = 128 + signal.SIGTERM  # 143


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: every `except KeyboardInterrupt` that tidies up after Ctrl-C runs for it too."""

    exit_code = EXIT_TERMINATED


def exit_code(interrupt: KeyboardInterrupt) -> int:
    """The status a command stopped by `interrupt` exits with: 143 after SIGTERM, 130 after Ctrl-C."""
    return getattr(interrupt, "exit_code", EXIT_INTERRUPTED)


@contextmanager
def sigterm_as_interrupt():
    """Within the block, SIGTERM raises Terminated in the main thread (where Ctrl-C raises
    KeyboardInterrupt); the previous handler is back afterwards. Outside the main thread
    (where no signal handler can be set) it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def raise_terminated(signum, frame):
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
