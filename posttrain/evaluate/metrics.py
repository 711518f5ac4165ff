"""Evaluation metrics: pure functions over attempt rows (one per episode, see `attempt_row`).

pass@k is the unbiased estimator of Chen et al. (2021): with n attempts of a task of which c
passed, the probability that at least one of k attempts drawn without replacement passes,

    pass@k = 1 - C(n - c, k) / C(n, k)

averaged over tasks (tasks with fewer than k attempts are left out of pass@k).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from math import comb

from posttrain.agent.trajectory import Trajectory

# failure categories of a failed attempt, from the trajectory's stop reason and failure mode
FAILURE_CATEGORIES = (
    "agent_timeout",
    "budget_exhausted",
    "verifier_failed",
    "verifier_timeout",
    "context_overflow",
    "tool_errors",
    "no_tool_calls",
    "sandbox_error",
    "engine_error",
    "wrong_answer",
)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one task: n attempts, c passed."""
    if not 0 <= c <= n or k < 1:
        raise ValueError(f"pass@k needs 0 <= c <= n and k >= 1 (n={n}, c={c}, k={k})")
    if k > n:
        raise ValueError(f"pass@{k} needs at least {k} attempts, got {n}")
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def failure_category(trajectory: Trajectory) -> str | None:
    """None when the attempt passed."""
    if trajectory.reward is not None and trajectory.reward.passed:
        return None
    mode = trajectory.failure_mode
    if mode == "timeout":
        return "agent_timeout"
    if mode in ("max_steps", "max_tokens", "cost"):
        return "budget_exhausted"
    if mode == "idle":
        return "no_tool_calls"
    if mode in ("verifier_timeout", "context_overflow"):
        return mode
    if mode in ("verifier_error", "verifier_unavailable", "verifier_killed"):
        return "verifier_failed"
    if mode in ("sandbox_died", "environment_error"):
        return "sandbox_error"
    if mode in ("policy_error", "engine_error"):
        return "engine_error"
    calls = trajectory.tool_calls
    failed = [c for c in calls if c.error and c.error != "output_truncated"]
    if calls and len(failed) * 2 > len(calls):
        return "tool_errors"  # it stopped, but most of its calls had failed
    return "wrong_answer"


def outcome(row: dict) -> str:
    """An attempt's one label: `passed`, or the failure category of a failed attempt."""
    return "passed" if row.get("passed") else row.get("failure") or "wrong_answer"


def tool_call_accuracy(trajectories: list[Trajectory]) -> float | None:
    """Well-formed and successful calls over all calls (None when no call was made)."""
    calls = [c for t in trajectories for c in t.tool_calls]
    if not calls:
        return None
    good = sum(1 for c in calls if not c.error or c.error == "output_truncated")
    return good / len(calls)


def attempt_row(
    task_id: str,
    attempt: int,
    category: str,
    trajectory: Trajectory,
    trajectory_path: str,
    prices: dict[str, float] | None = None,
) -> dict:
    """One line of results.jsonl."""
    prices = prices or {}
    calls = trajectory.tool_calls
    cached = sum(t.cached_prompt_tokens for t in trajectory.turns)
    prompt, completion = trajectory.prompt_tokens, trajectory.completion_tokens
    cost = prompt * prices.get("prompt", 0.0) / 1000 + completion * prices.get("completion", 0.0) / 1000
    return {
        "task_id": task_id,
        "attempt": attempt,
        "category": category,
        "reward": trajectory.reward.value if trajectory.reward else 0.0,
        "passed": bool(trajectory.reward and trajectory.reward.passed),
        "failure": failure_category(trajectory),
        "failure_mode": trajectory.failure_mode,
        "stop_reason": trajectory.stop_reason,
        "steps": len(trajectory.turns),
        "time_s": {"setup": trajectory.setup_s, "agent": trajectory.duration_s, "verifier": trajectory.verifier_s},
        "tokens": {"in": prompt, "out": completion, "cached": cached},
        "tool_calls": len(calls),
        "tool_calls_ok": sum(1 for c in calls if not c.error or c.error == "output_truncated"),
        "cost": cost,
        "trajectory": trajectory_path,
    }


def summarize(rows: list[dict], ks: list[int] | None = None) -> dict:
    """summary.json from results rows (order does not matter): outcomes only, so a resumed run
    and an uninterrupted one with the same seeds give the same file. Wall times and
    prefix-cache hits, which depend on the machine and on what shared a batch, are in
    `performance()`."""
    by_task: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_task[row["task_id"]].append(row)
    attempts = max((len(v) for v in by_task.values()), default=0)
    ks = sorted({k for k in (ks or [1, attempts]) if 1 <= k <= attempts}) or [1]
    per_task = {}
    for task_id, task_rows in sorted(by_task.items()):
        n, c = len(task_rows), sum(r["passed"] for r in task_rows)
        per_task[task_id] = {
            "category": task_rows[0]["category"],
            "attempts": n,
            "passed": c,
            "mean_reward": sum(r["reward"] for r in task_rows) / n,
            "pass_at_k": {str(k): pass_at_k(n, c, k) for k in ks if k <= n},
            "mean_steps": sum(r["steps"] for r in task_rows) / n,
        }

    def pass_k(k: int) -> float | None:
        values = [t["pass_at_k"][str(k)] for t in per_task.values() if str(k) in t["pass_at_k"]]
        return sum(values) / len(values) if values else None

    n_rows = len(rows) or 1
    calls = sum(r["tool_calls"] for r in rows)
    by_category: dict[str, list[float]] = defaultdict(list)
    for task in per_task.values():
        by_category[task["category"]].append(task["pass_at_k"].get("1", 0.0))
    tokens = {key: sum(r["tokens"][key] for r in rows) for key in ("in", "out")}
    return {
        "n_tasks": len(per_task),
        "n_attempts": len(rows),
        "mean_reward": sum(r["reward"] for r in rows) / n_rows,
        "pass_at_1": pass_k(1),
        "pass_at_k": {str(k): pass_k(k) for k in ks},
        "failure_modes": dict(sorted(Counter(r["failure"] for r in rows if r["failure"]).items())),
        "tool_call_accuracy": (sum(r["tool_calls_ok"] for r in rows) / calls) if calls else None,
        "tokens": tokens,
        "cost": sum(r["cost"] for r in rows),
        "steps": _distribution([r["steps"] for r in rows]),
        "pass_rate_by_category": {k: sum(v) / len(v) for k, v in sorted(by_category.items())},
        "tasks": per_task,
    }


def _distribution(values: list[float]) -> dict:
    if not values:
        return {"mean": 0.0, "p50": 0.0, "p90": 0.0, "max": 0.0, "total": 0.0}
    ordered = sorted(values)

    def quantile(q: float) -> float:
        return float(ordered[min(len(ordered) - 1, int(q * len(ordered)))])

    return {
        "mean": sum(values) / len(values),
        "p50": quantile(0.5),
        "p90": quantile(0.9),
        "max": float(ordered[-1]),
        "total": float(sum(values)),
    }


def performance(rows: list[dict]) -> dict:
    """performance.json: wall time per phase and prefix-cache use, overall and per task."""
    cached, prompt = sum(r["tokens"]["cached"] for r in rows), sum(r["tokens"]["in"] for r in rows)
    by_task: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_task[row["task_id"]].append(row)
    return {
        "time_s": {
            phase: _distribution([r["time_s"][phase] for r in rows]) for phase in ("setup", "agent", "verifier")
        },
        "tokens_cached": cached,
        "cache_hit_rate": cached / prompt if prompt else 0.0,
        "tasks": {
            task: {
                phase: sum(r["time_s"][phase] for r in task_rows) / len(task_rows)
                for phase in ("setup", "agent", "verifier")
            }
            for task, task_rows in sorted(by_task.items())
        },
    }
