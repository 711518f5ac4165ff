"""The Harbor verifier: after the agent stops, copy the task's tests/ into /tests, run
tests/test.sh, and read the reward from /logs/verifier/reward.txt (a float) or reward.json.

The agent never sees the tests, and whatever it left in /tests or /logs/verifier is wiped
first, so it cannot plant a reward; tools and Python startup hooks it planted in system
directories are dropped (verifier_guard.py)."""

from __future__ import annotations

import json
import secrets
import time
from pathlib import Path

from posttrain.agent.verifier_guard import DEFAULT_PATH, VERIFIER_ENV, guard_toolchain
from posttrain.sandbox.interface import SandboxError, directory_tar
from posttrain.tasks.records import Reward, Task

REWARD_TXT = "/logs/verifier/reward.txt"
REWARD_JSON = "/logs/verifier/reward.json"
_TAIL = 2000
HARNESS_ENV = {"PATH": DEFAULT_PATH}  # the harness's own commands never look up the agent's PATH
_MARK = "==posttrain-reward-file=="
_READ_REWARD_FILES = (f'for f in {REWARD_TXT} {REWARD_JSON}; do if [ -f "$f" ]; then echo "{_MARK} $f"; '
                      'head -c 100000 "$f"; echo; fi; done')
# the tests' copy and the reward files' read, beside test.sh's own limit, in the one command
COPY_ALLOWANCE_S = 5


def run_verifier(task: Task, sandbox, workdir: str | None = None, wipe_reward: bool = True) -> Reward:
    """`wipe_reward=False` leaves whatever the agent wrote in /logs/verifier (the quality
    inspector asks whether a task's own test.sh overwrites a planted reward).

    Copying the tests in, running test.sh and reading the reward files are one sandbox command
    (a verifier run is most of what an inspection or an agent episode's scoring costs, and each
    command is a fresh mount namespace); the reward files follow test.sh's output after a
    marker with a fresh nonce, which nothing test.sh prints can forge."""
    tests = Path(task.metadata["tests_dir"])
    started = time.perf_counter()
    dropped: list[str] = []
    mark = f"==posttrain-verifier-{secrets.token_hex(8)}=="
    try:
        spec_env = getattr(getattr(sandbox, "spec", None), "env", None) or {}
        dropped = guard_toolchain(sandbox, spec_env.get("PATH"))
        result = sandbox.exec(["/bin/sh", "-c", _verifier_script(mark, wipe_reward)],
                              timeout=task.limits.verifier_timeout_s + COPY_ALLOWANCE_S, stdin=directory_tar(tests),
                              env={**VERIFIER_ENV, **(task.metadata.get("verifier_env") or {})},
                              workdir=workdir or (task.environment.workdir if task.environment else "/app"))
        copy_failed = f"{mark} copy-failed"
        if copy_failed in result.stderr:
            raise SandboxError(f"could not copy the tests in: {result.stderr.split(copy_failed)[0].strip()[-500:]}")
        stdout, files = _split_reward_files(result.stdout, mark)
        if files is None and not result.timed_out:  # output past the capture limit hid the files
            files = _reward_files(sandbox)
    except (SandboxError, OSError) as exc:
        return Reward(value=0.0, passed=False, details={"error": f"the verifier could not run: {exc}",
                                                        "duration_s": time.perf_counter() - started})
    details = {
        "exit_code": result.exit_code,
        "timed_out": result.timed_out,
        "stdout_tail": stdout[-_TAIL:],
        "stderr_tail": result.stderr[-_TAIL:],
        "duration_s": time.perf_counter() - started,
    }
    if dropped:
        details["dropped_agent_files"] = dropped[:50]
    if not wipe_reward:
        details["reward_files_kept"] = True
    value, source, problem = _read_reward(files or {})
    details["reward_file"] = source
    if problem:
        details["error"] = problem
    if result.timed_out:
        details["error"] = f"test.sh ran past the verifier timeout ({task.limits.verifier_timeout_s:g} s)"
        value = 0.0
    return Reward(value=value, passed=value >= 1.0 - 1e-9, details=details)


def _verifier_script(mark: str, wipe_reward: bool) -> str:
    """/bin/sh: the tests (a tar on stdin) into a clean /tests, test.sh with no stdin, then the
    reward files after `mark`; exits with test.sh's status. The harness's own commands run on
    the image's PATH, test.sh on the task's environment."""
    wipe = "rm -rf /logs/verifier && " if wipe_reward else ""
    copy = (f"mkdir -p /tests && find /tests -mindepth 1 -delete && {wipe}mkdir -p /logs/verifier && "
            "tar -x -C /tests --no-same-owner")
    return (f"(PATH={DEFAULT_PATH}; {copy}) || {{ echo '{mark} copy-failed' >&2; exit 1; }}\n"
            "bash /tests/test.sh < /dev/null\n"
            "status=$?\n"
            f"(PATH={DEFAULT_PATH}; echo; echo '{mark}'; {_READ_REWARD_FILES})\n"
            "exit $status\n")


def _split_reward_files(stdout: str, mark: str) -> tuple[str, dict[str, str] | None]:
    """test.sh's own stdout, and the reward files printed after the last `mark` (None when the
    mark is not there: the output was cut at the capture limit)."""
    head, found, tail = stdout.rpartition(f"\n{mark}\n")
    if not found:
        return stdout, None
    return head, _parse_reward_files(tail)


def _reward_files(sandbox) -> dict[str, str]:
    """Both reward files' text (those that exist), read in a command of their own."""
    try:
        result = sandbox.exec(["/bin/sh", "-c", _READ_REWARD_FILES], timeout=60, workdir="/", env=HARNESS_ENV)
    except (SandboxError, OSError):
        return {}
    return _parse_reward_files(result.stdout)


def _parse_reward_files(text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    current = None
    for line in text.splitlines():
        if line.startswith(_MARK + " "):
            current = line[len(_MARK) + 1:]
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
