"""The Harbor verifier: after the agent stops, copy the task's tests/ into /tests, run
tests/test.sh, and read the reward from /logs/verifier/reward.txt (a float) or reward.json.

The agent never sees the tests, and whatever it left in /tests or /logs/verifier is wiped
first, so it cannot plant a reward; tools and Python startup hooks it planted in system
directories are dropped (verifier_guard.py)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from posttrain.agent.verifier_guard import VERIFIER_ENV, guard_toolchain
from posttrain.sandbox.exit_status import killing_signal
from posttrain.sandbox.interface import DEFAULT_PATH, SandboxError, directory_tar
from posttrain.tasks.records import Reward, Task

REWARD_TXT = "/logs/verifier/reward.txt"
REWARD_JSON = "/logs/verifier/reward.json"
_TAIL = 2000
HARNESS_ENV = {"PATH": DEFAULT_PATH}  # the harness's own commands never look up the agent's PATH
_MARK = "==posttrain-reward-file=="
_READ_REWARD_FILES = (
    f'for f in {REWARD_TXT} {REWARD_JSON}; do if [ -f "$f" ]; then echo "{_MARK} $f"; '
    'head -c 100000 "$f"; echo; fi; done'
)
COPY_ALLOWANCE_S = 5  # the tests' copy, beside test.sh's own limit, in the same command


def run_verifier(task: Task, sandbox, workdir: str | None = None, wipe_reward: bool = True) -> Reward:
    """`wipe_reward=False` leaves whatever the agent wrote in /logs/verifier (the quality
    inspector asks whether a task's own test.sh overwrites a planted reward).

    Two sandbox commands: the tests' copy and test.sh (the copy's shell execs test.sh, so the
    command's status is test.sh's own, which nothing inside the sandbox can forge), then the
    reward files, after the sandbox has killed whatever test.sh left running. A test.sh killed
    by a signal gives no reward: code it ran (the agent's) could have written a passing
    reward and killed it before it wrote its own."""
    tests = Path(task.metadata["tests_dir"])
    started = time.perf_counter()
    dropped: list[str] = []
    try:
        spec_env = getattr(getattr(sandbox, "spec", None), "env", None) or {}
        dropped = guard_toolchain(sandbox, spec_env.get("PATH"))
        result = sandbox.exec(
            ["/bin/sh", "-c", _verifier_script(wipe_reward)],
            timeout=task.limits.verifier_timeout_s + COPY_ALLOWANCE_S,
            stdin=directory_tar(tests),
            env={**VERIFIER_ENV, **(task.metadata.get("verifier_env") or {})},
            workdir=workdir or (task.environment.workdir if task.environment else "/app"),
        )
        if result.exit_code == COPY_FAILED:
            raise SandboxError(f"could not copy the tests in: {result.stderr.strip()[-500:]}")
        files = _reward_files(sandbox) if not result.timed_out else {}
    except (SandboxError, OSError) as exc:
        return Reward(
            value=0.0,
            passed=False,
            details={"error": f"the verifier could not run: {exc}", "duration_s": time.perf_counter() - started},
        )
    details = {
        "exit_code": result.exit_code,
        "timed_out": result.timed_out,
        "stdout_tail": result.stdout[-_TAIL:],
        "stderr_tail": result.stderr[-_TAIL:],
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


def _verifier_script(wipe_reward: bool) -> str:
    """/bin/sh: the tests (a tar on stdin) into a clean /tests on the image's PATH, then exec
    test.sh with no stdin, in the task's environment."""
    wipe = "rm -rf /logs/verifier && " if wipe_reward else ""
    copy = (
        f"mkdir -p /tests && find /tests -mindepth 1 -delete && {wipe}mkdir -p /logs/verifier && "
        "tar -x -C /tests --no-same-owner"
    )
    return f"(PATH={DEFAULT_PATH}; {copy}) || exit {COPY_FAILED}\nexec bash /tests/test.sh < /dev/null\n"


def _reward_files(sandbox) -> dict[str, str]:
    """Both reward files' text (those that exist), read in a command of their own."""
    try:
        result = sandbox.exec(["/bin/sh", "-c", _READ_REWARD_FILES], timeout=60, workdir="/", env=HARNESS_ENV)
    except (SandboxError, OSError):
        return {}
    found: dict[str, str] = {}
    current = None
    for line in result.stdout.splitlines():
        if line.startswith(_MARK + " "):
            current = line[len(_MARK) + 1 :]
            found[current] = ""
        elif current is not None:
            found[current] += line + "\n"
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
