"""Killing a sandbox's process from outside, as the infrastructure would (the host's OOM killer,
an operator, a chaos run): a watcher thread that SIGKILLs the outermost bwrap process of the
first sandboxed command of this test process (never another process's: the machine may run
other sandboxes) whose command line holds every given marker."""

from __future__ import annotations

import os
import signal
import threading
import time
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=1)
def _chaos():
    """benchmarks/chaos.py, whose /proc reading (process_table, descendants) this reuses."""
    from tests.benchmarks.scripts import load_script

    return load_script("chaos")


def outer_bwraps(*markers: str, running: str | None = None) -> list[int]:
    """This process's host-side bwrap processes (parent not bwrap) whose command line holds
    every marker (and, with `running`, under which a process of that name runs already)."""
    chaos = _chaos()
    table = chaos.process_table()
    found = []
    for pid in chaos.descendants(os.getpid(), table):
        ppid, name = table[pid]
        if name != "bwrap" or table.get(ppid, (0, ""))[1] == "bwrap":
            continue
        if running is not None and not any(table[d][1] == running for d in chaos.descendants(pid, table)):
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:  # it ended meanwhile
            continue
        if all(m.encode() in cmdline for m in markers):
            found.append(pid)
    return found


class SandboxKiller:
    """Once started, SIGKILLs the first outer bwrap process matching `markers()` (a callable, so
    the markers can be known only once an episode has opened its sandbox) and `running`.
    `killed` is its pid."""

    def __init__(self, markers, timeout_s: float = 120.0, running: str | None = None) -> None:
        self.markers = markers
        self.running = running  # kill only once a process of this name runs in the sandbox
        self.timeout_s = timeout_s
        self.killed: int | None = None
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> SandboxKiller:
        _chaos()  # loaded here, not in the watcher's first look
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        if self.error is not None:
            raise self.error

    def _watch(self) -> None:
        try:
            self._look()
        except BaseException as exc:  # noqa: BLE001 - the test's thread raises it
            self.error = exc

    def _look(self) -> None:
        deadline = time.monotonic() + self.timeout_s
        while not self._stop.is_set() and time.monotonic() < deadline:
            markers = self.markers()
            for pid in outer_bwraps(*markers, running=self.running) if markers else []:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    continue
                self.killed = pid
                return
            time.sleep(0.02)
