"""Run a host process with a deadline, stdin, and bounded capture of stdout/stderr: the one
runner of every backend that runs its commands as host processes (bwrap, local)."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass

DRAIN_S = 1.0  # how long output is still read after the command's tree was killed
_CHUNK = 65536


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


def kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_bounded(
    argv: list[str],
    env: dict[str, str],
    stdin: bytes | None,
    timeout_s: float,
    output_limit: int,
    kill_tree,
    cwd=None,
    preexec_fn=None,
    on_start=None,
) -> RawResult:
    """Feed `stdin`; keep the first `output_limit` bytes of each stream and drain (discard) the
    rest, so a command that prints gigabytes costs no memory. When the command exits or the
    deadline passes, `kill_tree(proc)` must kill its whole process tree (what it left running,
    or all of it); what is still in the pipes is then read for at most DRAIN_S. `on_start(proc)`
    is called once the process runs. Raises what Popen raises when the command cannot start."""
    started = time.monotonic()
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=preexec_fn,
        close_fds=True,
    )
    out, err = BoundedCapture(output_limit), BoundedCapture(output_limit)
    pipes = _Pipes(proc, stdin, out, err)
    killed = False
    try:
        if on_start is not None:
            on_start(proc)
        timed_out = _wait_for_exit(proc, pipes, started + timeout_s)
        killed = True
        kill_tree(proc)
        # what the command and its (now dead) children wrote is still in the pipes
        drain_until = time.monotonic() + DRAIN_S
        while pipes.readers_open() and time.monotonic() < drain_until:
            pipes.step(0.05)
    except BaseException:
        if not killed:
            kill_tree(proc)
        raise
    finally:
        pipes.close()
        proc.wait()
    return RawResult(
        returncode=proc.returncode,
        stdout=bytes(out.data),
        stderr=bytes(err.data),
        duration_s=time.monotonic() - started,
        timed_out=timed_out,
        stdout_truncated=out.truncated,
        stderr_truncated=err.truncated,
    )


def run_passthrough(argv: list[str], env: dict[str, str], timeout_s: float, kill_tree) -> RawResult:
    """Run with this process's stdout/stderr passed straight through (for a CLI): the result
    carries the exit status and no output. `kill_tree(proc)` as in `run_bounded`, called at
    the deadline or on an interrupt."""
    started = time.monotonic()
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, start_new_session=True)
    timed_out = False
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        kill_tree(proc)
        proc.wait()
    except KeyboardInterrupt:
        kill_tree(proc)
        proc.wait()
        raise
    return RawResult(proc.returncode, b"", b"", time.monotonic() - started, timed_out, False, False)


def _child_exited(proc: subprocess.Popen) -> bool:
    """Whether the command has exited, without reaping it where the OS allows: an unreaped child
    keeps its pid (and so its process group id) from being reused while we kill what is left of
    its group."""
    if not hasattr(os, "waitid"):  # macOS
        return proc.poll() is not None
    try:
        info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None


def _wait_for_exit(proc: subprocess.Popen, pipes: _Pipes, deadline: float) -> bool:
    """Feed stdin and capture output until the command exits (not until its output closes: what
    it left running may hold the pipes) or the deadline passes. Returns whether it passed."""
    while True:
        if _child_exited(proc):
            return False
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return True
        if not pipes.open():  # output closed, command still running: just wait
            try:
                proc.wait(timeout=remaining)
            except subprocess.TimeoutExpired:
                return True
            return False
        pipes.step(min(remaining, 0.05))


class _Pipes:
    """A command's stdin, fed from a buffer, and its stdout/stderr, read into captures, all
    non-blocking under one selector."""

    def __init__(self, proc: subprocess.Popen, data: bytes | None, out: BoundedCapture, err: BoundedCapture) -> None:
        self.proc = proc
        self.selector = selectors.DefaultSelector()
        self.captures = {proc.stdout: out, proc.stderr: err}
        for stream in self.captures:
            os.set_blocking(stream.fileno(), False)
            self.selector.register(stream, selectors.EVENT_READ)
        self.pending = memoryview(data) if data else None
        if proc.stdin is not None:
            if self.pending:
                os.set_blocking(proc.stdin.fileno(), False)
                self.selector.register(proc.stdin, selectors.EVENT_WRITE)
            else:
                proc.stdin.close()

    def open(self) -> bool:
        return bool(self.selector.get_map())

    def readers_open(self) -> bool:
        return any(key.fileobj in self.captures for key in self.selector.get_map().values())

    def step(self, wait: float) -> None:
        for key, _ in self.selector.select(timeout=wait):
            stream = key.fileobj
            if stream is self.proc.stdin:
                try:
                    written = os.write(stream.fileno(), self.pending[:_CHUNK])
                    self.pending = self.pending[written:]
                except BlockingIOError:
                    continue
                except OSError:  # BrokenPipeError among them: the command stopped reading
                    self.pending = self.pending[:0]
                if not self.pending:
                    self.selector.unregister(stream)
                    stream.close()
                continue
            try:
                chunk = os.read(stream.fileno(), _CHUNK)
            except BlockingIOError:
                continue
            if chunk:
                self.captures[stream].feed(chunk)
            else:
                self.selector.unregister(stream)
                stream.close()

    def close(self) -> None:
        self.selector.close()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None and not stream.closed:
                stream.close()
