"""Runs one command and leaves nothing of it behind: the `local` backend's stand-in for a PID
namespace.

    python -S -E reaper.py [RESOURCE:LIMIT ...] -- ARGV...

The reaper makes itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER), so a process the
command leaves behind, double-forked, `setsid`, `nohup` or `disown`ed, is re-parented to the
reaper instead of to init. When the command exits (or the reaper gets SIGTERM: the caller's
deadline), every process below the reaper is SIGKILLed and reaped, round after round until
none is left, then the reaper exits with the command's status (by the same signal if a signal
ended it). The rlimits (RESOURCE is a `resource.RLIMIT_*` number) are set in the command's
process only, so the reaper itself never runs short of memory. A command that cannot start
exits 127 (not found) or 126 (not executable) with `ARGV0: reason` on stderr, as a shell
reports it.

Run as a script, not imported by the package: it starts in a bare interpreter (-S -E), and
imports only the standard library.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import sys

PR_SET_CHILD_SUBREAPER = 36


def descendants(root: int) -> list[int]:
    """Every live process whose chain of parents reaches `root`, read from /proc."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:  # exited while we looked
            continue
        children.setdefault(int(fields[1]), []).append(int(name))
    found, frontier = [], [root]
    while frontier:
        below = children.get(frontier.pop(), [])
        found.extend(below)
        frontier.extend(below)
    return found


def kill_everything_below(root: int) -> None:
    while True:
        left = descendants(root)
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _reap_exited()
        if not left:
            return


def _reap_exited() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _start(argv: list[str], rlimits: list[tuple[int, int]]) -> int:
    child = os.fork()
    if child == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        for res, value in rlimits:
            try:
                resource.setrlimit(res, (value, value))
            except (ValueError, OSError):
                pass
        try:
            os.execvp(argv[0], argv)
        except OSError as exc:
            os.write(2, f"{argv[0]}: {exc.strerror}\n".encode())
            os._exit(127 if isinstance(exc, FileNotFoundError) else 126)
    return child


def main(args: list[str]) -> None:
    split = args.index("--")
    rlimits = [tuple(int(n) for n in pair.split(":")) for pair in args[:split]]
    argv = args[split + 1 :]
    me = os.getpid()
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)

    def stop(_signum, _frame) -> None:  # the caller's deadline: take everything down now
        kill_everything_below(me)
        os._exit(128 + signal.SIGKILL)

    signal.signal(signal.SIGTERM, stop)
    child = _start(argv, rlimits)
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
    kill_everything_below(me)
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        if signum != signal.SIGKILL:  # SIGKILL's action cannot be set (nor caught)
            signal.signal(signum, signal.SIG_DFL)
        os.kill(me, signum)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


if __name__ == "__main__":
    main(sys.argv[1:])
