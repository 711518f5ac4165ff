"""The Harbor verifier: after the agent stops, copy the task's tests/ into /tests, run
tests/test.sh, and read the reward from /logs/verifier/reward.txt (a float) or reward.json.

The agent never sees the tests, and whatever it left in /tests or /logs/verifier is wiped
first, so it cannot plant a reward."""

from __future__ import annotations

import json
import time
from pathlib import Path

from posttrain.sandbox.interface import SandboxError
from posttrain.tasks.records import Reward, Task

REWARD_TXT = "/logs/verifier/reward.txt"
REWARD_JSON = "/logs/verifier/reward.json"
_TAIL = 2000


def run_verifier(task: Task, sandbox, workdir: str | None = None) -> Reward:
    tests = Path(task.metadata["tests_dir"])
    started = time.perf_counter()
    try:
        sandbox.exec("rm -rf /tests /logs/verifier && mkdir -p /tests /logs/verifier", timeout=60, workdir="/")
        sandbox.upload(tests, "/tests")
        result = sandbox.exec(["bash", "/tests/test.sh"], timeout=task.limits.verifier_timeout_s,
                              env=dict(task.metadata.get("verifier_env") or {}),
                              workdir=workdir or (task.environment.workdir if task.environment else "/app"))
    except (SandboxError, OSError) as exc:
        return Reward(value=0.0, passed=False, details={"error": f"the verifier could not run: {exc}",
                                                        "duration_s": time.perf_counter() - started})
    details = {
        "exit_code": result.exit_code,
        "timed_out": result.timed_out,
        "stdout_tail": result.stdout[-_TAIL:],
        "stderr_tail": result.stderr[-_TAIL:],
        "duration_s": time.perf_counter() - started,
    }
    value, source, problem = _read_reward(sandbox)
    details["reward_file"] = source
    if problem:
        details["error"] = problem
    if result.timed_out:
        details["error"] = f"test.sh ran past the verifier timeout ({task.limits.verifier_timeout_s:g} s)"
        value = 0.0
    return Reward(value=value, passed=value >= 1.0 - 1e-9, details=details)


def _read_reward(sandbox) -> tuple[float, str | None, str | None]:
    for path in (REWARD_TXT, REWARD_JSON):
        try:
            text = sandbox.read_file(path).decode(errors="replace").strip()
        except (FileNotFoundError, SandboxError):
            continue
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
