"""Run a process with a deadline, stdin, and bounded capture of stdout/stderr."""

from __future__ import annotations

import os
import selectors
import subprocess
import time
from dataclasses import dataclass


class BoundedCapture:
    """The first `limit` bytes of a stream; the rest is read and dropped."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.truncated = False

    def feed(self, chunk: bytes | None) -> None:
        if not chunk:
            return
        room = self.limit - len(self.data)
        if room > 0:
            self.data.extend(chunk[:room])
        if len(chunk) > max(room, 0):
            self.truncated = True

    def text(self) -> str:
        return bytes(self.data).decode("utf-8", errors="replace")


@dataclass
class RawResult:
    returncode: int
    stdout: bytes
    stderr: bytes
    duration_s: float
    timed_out: bool
    stdout_truncated: bool
    stderr_truncated: bool


def run_bounded(
    argv: list[str],
    env: dict[str, str],
    stdin: bytes | None,
    timeout_s: float,
    output_limit: int,
    on_timeout,
    pass_fds: tuple[int, ...] = (),
) -> RawResult:
    """Keep the first `output_limit` bytes of each stream and drain (discard) the rest, so a
    command that prints gigabytes costs no memory; call `on_timeout(proc)` at the deadline,
    which must kill the whole process tree."""
    started = time.monotonic()
    proc = subprocess.Popen(
        argv, env=env, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, pass_fds=pass_fds,
    )
    captures = {proc.stdout: BoundedCapture(output_limit), proc.stderr: BoundedCapture(output_limit)}
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ)
    selector.register(proc.stderr, selectors.EVENT_READ)
    pending = memoryview(stdin) if stdin else None
    if stdin is not None:
        if pending:
            os.set_blocking(proc.stdin.fileno(), False)
            selector.register(proc.stdin, selectors.EVENT_WRITE)
        else:
            proc.stdin.close()
    timed_out = False
    deadline = started + timeout_s
    open_streams = 2
    while open_streams:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            timed_out = True
            on_timeout(proc)
            break
        for key, _ in selector.select(timeout=min(remaining, 0.5)):
            stream = key.fileobj
            if stream is proc.stdin:
                try:
                    written = os.write(proc.stdin.fileno(), pending[:65536])
                    pending = pending[written:]
                except BrokenPipeError:
                    pending = pending[:0]
                if not pending:
                    selector.unregister(proc.stdin)
                    proc.stdin.close()
                continue
            chunk = os.read(stream.fileno(), 65536)
            if not chunk:
                selector.unregister(stream)
                open_streams -= 1
                continue
            captures[stream].feed(chunk)
    selector.close()
    if timed_out:
        proc.wait()
    else:
        remaining = max(deadline - time.monotonic(), 0.0)
        try:
            proc.wait(timeout=remaining)
        except subprocess.TimeoutExpired:
            timed_out = True
            on_timeout(proc)
            proc.wait()
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream and not stream.closed:
            stream.close()
    return RawResult(
        returncode=proc.returncode,
        stdout=bytes(captures[proc.stdout].data),
        stderr=bytes(captures[proc.stderr].data),
        duration_s=time.monotonic() - started,
        timed_out=timed_out,
        stdout_truncated=captures[proc.stdout].truncated,
        stderr_truncated=captures[proc.stderr].truncated,
    )
