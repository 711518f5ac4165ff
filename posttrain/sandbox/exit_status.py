"""What a sandboxed command's exit code says, the same in every backend.

124      it ran past its timeout (`timed_out=True`; the `timeout(1)` convention)
137      it was killed for memory (`oom_killed=True`), or by a plain SIGKILL
128 + N  it was killed by signal N, as a shell reports it
"""

from __future__ import annotations

TIMEOUT_EXIT_CODE = 124
SIGNALLED = 128  # a shell's status for a process killed by signal N is 128 + N
SIGKILL_EXIT_CODE = SIGNALLED + 9


def exit_code_of(returncode: int, timed_out: bool, oom_killed: bool = False) -> int:
    """The exit code a sandbox reports for a host process's `returncode` (Popen's: -N when
    signal N killed it)."""
    if timed_out:
        return TIMEOUT_EXIT_CODE
    if returncode < 0:
        return SIGKILL_EXIT_CODE if oom_killed else SIGNALLED - returncode
    return returncode


def classify_exit(
    exit_code: int, duration_s: float, timeout_s: float, memory_limited: bool, oom_reported: bool = False
) -> tuple[int, bool, bool]:
    """(exit_code, timed_out, oom_killed) of a command run under `timeout -s KILL`, which can
    only say 137: a SIGKILL at or past the timeout is the timeout's; before it, under a memory
    limit (or when the engine reported an OOM kill), it is taken for the OOM killer's."""
    if exit_code == SIGKILL_EXIT_CODE:
        if duration_s >= timeout_s:
            return TIMEOUT_EXIT_CODE, True, False
        if memory_limited or oom_reported:
            return SIGKILL_EXIT_CODE, False, True
    return exit_code, False, False


def killing_signal(exit_code: int) -> int | None:
    """N when `exit_code` says signal N killed the command, else None."""
    if SIGNALLED < exit_code <= SIGNALLED + 64:
        return exit_code - SIGNALLED
    return None
