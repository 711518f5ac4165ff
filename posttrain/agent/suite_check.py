"""`posttrain agent check`: is a task suite solvable and not trivially passed? The oracle
(solution/solve.sh) must pass every task and the do-nothing policy must pass none."""

from __future__ import annotations

from pathlib import Path

from posttrain.agent.loop import run_episodes
from posttrain.agent.policies import NopPolicy, OraclePolicy
from posttrain.console import pass_rate_progress
from posttrain.models.loading import load_tokenizer
from posttrain.tasks.harbor import load_harbor_suite


def check_suite(tasks: Path, names: str | None, tags: str | None, backend: str | None) -> dict:
    """Both policies on every chosen task (names, tags: comma-separated), each under a progress
    bar -> how many passed, the tasks the oracle failed and those doing nothing passed."""
    task_list = load_harbor_suite(tasks, names=_split(names), tags=_split(tags))
    tokenizer = load_tokenizer("smollm2-135m")
    passed = {}
    for policy in (OraclePolicy(), NopPolicy()):
        progress, ended = _progress(len(task_list), policy.name)
        with progress:
            trajectories = run_episodes(task_list, policy, tokenizer, backend=backend, on_episode_end=ended)
        passed[policy.name] = {t.task_id for t in trajectories if t.reward and t.reward.passed}
    nop_passed = sorted(passed["nop"])
    return {
        "tasks": len(task_list),
        "oracle_passed": len(passed["oracle"]),
        "nop_passed": len(nop_passed),
        "oracle_failed": sorted({t.id for t in task_list} - passed["oracle"]),
        "nop_passed_tasks": nop_passed,
    }


def _split(text: str | None) -> list[str] | None:
    return [t.strip() for t in text.split(",") if t.strip()] if text else None


def _progress(total: int, label: str):
    progress, report = pass_rate_progress(total, label)

    def ended(trajectory) -> None:
        passed = bool(trajectory.reward and trajectory.reward.passed)
        report(
            passed,
            f"{trajectory.task_id}: reward {trajectory.reward.value if trajectory.reward else None} "
            f"{trajectory.failure_mode or ''}",
        )

    return progress, ended
