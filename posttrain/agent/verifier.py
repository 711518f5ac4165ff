"""The Harbor verifier: after the agent stops, copy the task's tests/ into /tests, run
tests/test.sh, and read the reward from /logs/verifier/reward.txt (a float) or reward.json.

The agent never sees the tests, and cannot plant a reward: every process it started is gone
before test.sh runs (each sandbox command runs in its own PID namespace under bwrap, under a
subreaper in the local backend); under bwrap /logs/verifier is a fresh directory mounted for
test.sh's command alone and read on the host, a place the agent's commands never had mounted;
elsewhere whatever the agent left in /tests or /logs/verifier is wiped first. Tools and Python
startup hooks it planted in system directories are dropped (verifier_guard.py).

A verifier the infrastructure stopped is not a verdict: when the sandbox could not run it (the
runtime failed, the sandbox was gone, the tests' copy failed or ran out of time before test.sh
started, the reward's read could not run) the reward says `verifier_ran: False`; when the sandbox's process
running test.sh was killed from outside mid-run (`ExecResult.sandbox_killed`) it also says
`verifier_killed: True`. Both are infrastructure failures (agent/trajectory.py). A test.sh that
ran and failed, crashed, ran out of its own time or of its sandbox's memory, or was killed by
code it ran, is the episode's verdict: reward 0."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import time
from pathlib import Path

from posttrain.agent.verifier_guard import VERIFIER_ENV, guard_toolchain
from posttrain.sandbox.exit_status import killing_signal
from posttrain.sandbox.interface import DEFAULT_PATH, SandboxError, directory_tar
from posttrain.tasks.records import Reward, Task

VERDICT_DIR = "/logs/verifier"
REWARD_TXT = f"{VERDICT_DIR}/reward.txt"
REWARD_JSON = f"{VERDICT_DIR}/reward.json"
_REWARD_BYTES = 100_000  # read of each reward file
_TAIL = 2000
HARNESS_ENV = {"PATH": DEFAULT_PATH}  # the harness's own commands never look up the agent's PATH
_MARK = "==posttrain-reward-file=="
_READ_REWARD_FILES = (
    f'for f in {REWARD_TXT} {REWARD_JSON}; do if [ -f "$f" ]; then echo "{_MARK} $f"; '
    f'head -c {_REWARD_BYTES} "$f"; echo; fi; done'
)
COPY_ALLOWANCE_S = 5  # the tests' copy, beside test.sh's own limit, in the same command
_TESTS_STARTED = "==posttrain-tests-started=="  # on stderr once the copy is done, before test.sh starts


class VerifierKilled(SandboxError):
    """The sandbox's process running test.sh was killed from outside before test.sh finished."""


def run_verifier(task: Task, sandbox, workdir: str | None = None, wipe_reward: bool = True) -> Reward:
    """`wipe_reward=False` leaves whatever the agent wrote in /logs/verifier (the quality
    inspector asks whether a task's own test.sh overwrites a planted reward).

    The tests' copy and test.sh are one sandbox command (the copy's shell execs test.sh, so the
    command's status is test.sh's own, which nothing inside the sandbox can forge); the reward
    files are read after the sandbox has killed whatever test.sh left running, on the host from
    test.sh's private /logs/verifier under bwrap, else by a command of their own. A test.sh killed
    by a signal gives no reward: code it ran (the agent's) could have written a passing
    reward and killed it before it wrote its own."""
    tests = Path(task.metadata["tests_dir"])
    started = time.perf_counter()
    dropped: list[str] = []
    verdicts = None
    try:
        spec_env = getattr(getattr(sandbox, "spec", None), "env", None) or {}
        dropped = guard_toolchain(sandbox, spec_env.get("PATH"))
        verdicts = _private_verdict_dir(sandbox) if wipe_reward else None
        workdir = workdir or (task.environment.workdir if task.environment else "/app")
        # Under bwrap the command starts at / and test.sh runs in the workdir if the agent left
        # it (an agent that deleted its own workdir fails the tests; the verifier still runs).
        script = _verifier_script(wipe_reward and verdicts is None, cd_to=workdir if verdicts else None)
        result = sandbox.exec(
            ["/bin/sh", "-c", script],
            timeout=task.limits.verifier_timeout_s + COPY_ALLOWANCE_S,
            stdin=directory_tar(tests),
            env={**VERIFIER_ENV, **(task.metadata.get("verifier_env") or {})},
            workdir="/" if verdicts else workdir,
            **({"binds": {VERDICT_DIR: verdicts}} if verdicts else {}),
        )
        if result.sandbox_killed:
            raise VerifierKilled(
                f"the sandbox's process running test.sh was killed from outside after {result.duration_s:.1f} s "
                f"(exit {result.exit_code}); test.sh did not finish"
            )
        if result.exit_code == COPY_FAILED:
            raise SandboxError(f"could not copy the tests in: {result.stderr.strip()[-500:]}")
        tests_started = _TESTS_STARTED in result.stderr
        if result.timed_out and not tests_started:
            raise SandboxError(
                f"the tests' copy did not finish within the verifier's {task.limits.verifier_timeout_s:g} s "
                f"+ {COPY_ALLOWANCE_S} s: test.sh never started"
            )
        if result.timed_out:
            files = {}
        else:
            files = _reward_files_on_host(verdicts) if verdicts else _reward_files(sandbox)
    except (SandboxError, OSError) as exc:
        details = {
            "error": f"the verifier could not run: {exc}",
            "verifier_ran": False,
            "duration_s": time.perf_counter() - started,
        }
        if isinstance(exc, VerifierKilled):
            details["verifier_killed"] = True
        return Reward(value=0.0, passed=False, details=details)
    finally:
        if verdicts:
            shutil.rmtree(verdicts, ignore_errors=True)
    details = {
        "exit_code": result.exit_code,
        "timed_out": result.timed_out,
        "stdout_tail": result.stdout[-_TAIL:],
        "stderr_tail": result.stderr.replace(_TESTS_STARTED + "\n", "", 1)[-_TAIL:],
        "duration_s": time.perf_counter() - started,
    }
    if dropped:
        details["dropped_agent_files"] = dropped[:50]
    if not wipe_reward:
        details["reward_files_kept"] = True
    value, source, problem = _read_reward(files)
    details["reward_file"] = source
    if problem:
        details["error"] = problem
    if result.timed_out:
        details["error"] = f"test.sh ran past the verifier timeout ({task.limits.verifier_timeout_s:g} s)"
        value = 0.0
    elif (signum := killing_signal(result.exit_code)) is not None:
        details["error"] = (
            f"test.sh was killed by signal {signum}"
            + (" (out of memory)" if result.oom_killed else "")
            + f" before it finished: the reward it left ({value:g}) does not count"
        )
        value = 0.0
    return Reward(value=value, passed=value >= 1.0 - 1e-9, details=details)


COPY_FAILED = 97  # the copy's own status, not one a test.sh is likely to exit with


def _verifier_script(wipe_reward: bool, cd_to: str | None = None) -> str:
    """/bin/sh: the tests (a tar on stdin) into a clean /tests on the image's PATH, then exec
    test.sh with no stdin, in the task's environment (in `cd_to` when it exists)."""
    wipe = "rm -rf /logs/verifier && " if wipe_reward else ""
    copy = (
        f"mkdir -p /tests && find /tests -mindepth 1 -delete && {wipe}mkdir -p /logs/verifier && "
        "tar -x -C /tests --no-same-owner"
    )
    cd = f"cd {shlex.quote(cd_to)} 2>/dev/null || cd /\n" if cd_to else ""
    started = f"echo {_TESTS_STARTED} >&2\n"  # before test.sh: nothing it runs can take it back
    return f"(PATH={DEFAULT_PATH}; {copy}) || exit {COPY_FAILED}\n{cd}{started}exec bash /tests/test.sh < /dev/null\n"


def _reward_files(sandbox) -> dict[str, str]:
    """Both reward files' text (those that exist), read in a command of their own. A read the
    sandbox could not run, or that was killed from outside, raises SandboxError: the sandbox's
    failure, not a missing reward."""
    result = sandbox.exec(["/bin/sh", "-c", _READ_REWARD_FILES], timeout=60, workdir="/", env=HARNESS_ENV)
    if result.sandbox_killed:
        raise SandboxError("the sandbox's process reading the reward files was killed from outside")
    found: dict[str, str] = {}
    current = None
    for line in result.stdout.splitlines():
        if line.startswith(_MARK + " "):
            current = line[len(_MARK) + 1 :]
            found[current] = ""
        elif current is not None:
            found[current] += line + "\n"
    return found


def _private_verdict_dir(sandbox):
    """A fresh host directory to mount at /logs/verifier for test.sh alone, where the backend
    has them (bwrap); the agent's /logs/verifier is removed first so nothing of it (a file, a
    link) stands where the mount goes."""
    if not hasattr(sandbox, "private_dir"):
        return None
    cleared = sandbox.exec(
        ["/bin/sh", "-c", f"rm -rf {VERDICT_DIR} && mkdir -p {VERDICT_DIR}"], timeout=60, workdir="/", env=HARNESS_ENV
    )
    if not cleared.ok:
        raise SandboxError(f"could not clear {VERDICT_DIR}: {cleared.stderr.strip()[-500:]}")
    return sandbox.private_dir()


def _reward_files_on_host(directory) -> dict[str, str]:
    """The reward files test.sh left in its private verdict directory: regular files only (a
    link is never followed on the host), at most _REWARD_BYTES of each."""
    found: dict[str, str] = {}
    for path in (REWARD_TXT, REWARD_JSON):
        try:
            fd = os.open(directory / path.rsplit("/", 1)[1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        with os.fdopen(fd, "rb") as file:
            if stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                found[path] = file.read(_REWARD_BYTES).decode("utf-8", errors="replace") + "\n"
    return found


def _read_reward(files: dict[str, str]) -> tuple[float, str | None, str | None]:
    for path in (REWARD_TXT, REWARD_JSON):
        if path not in files:
            continue
        text = files[path].strip()
        try:
            if path == REWARD_TXT:
                return float(text), path, None
            data = json.loads(text)
            if isinstance(data, (int, float)):
                return float(data), path, None
            if "reward" in data:
                return float(data["reward"]), path, None
            values = [float(v) for v in data.values() if isinstance(v, (int, float))]
            return (sum(values) / len(values) if values else 0.0), path, None
        except (ValueError, TypeError, AttributeError) as exc:
            return 0.0, path, f"{path}: not a reward: {text[:100]!r} ({exc})"
    return 0.0, None, f"test.sh wrote neither {REWARD_TXT} nor {REWARD_JSON}"
