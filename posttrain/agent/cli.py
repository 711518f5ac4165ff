"""`posttrain agent ...`: run agents on terminal tasks (Harbor format) in sandboxes."""

from __future__ import annotations

from pathlib import Path

import typer

from posttrain.console import command_group, emit_json, fail, pass_rate_progress
from posttrain.errors import PosttrainError

app = command_group()


@app.callback()
def _agent() -> None:
    """Agents on terminal tasks (Harbor format) in sandboxes.

    To run an agent (oracle, nop or a model) on tasks, with pass@k, failure modes, reports and
    resume, use `posttrain eval --tasks DIR --agent ... --out DIR`. `posttrain agent check`
    is the quick sanity check of a task suite; `posttrain inspect` is the full quality gate."""


def _split(text: str | None) -> list[str] | None:
    return [t.strip() for t in text.split(",") if t.strip()] if text else None


def _load(tasks: Path, names: str | None, tags: str | None):
    from posttrain.tasks.harbor import load_harbor_suite

    return load_harbor_suite(tasks, names=_split(names), tags=_split(tags))


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


@app.command("check")
def check_command(
    tasks: Path = typer.Argument(..., help="A Harbor task directory, or a directory of them."),
    names: str | None = typer.Option(None, "--names", help="Only these tasks (comma-separated names)."),
    tags: str | None = typer.Option(None, "--tags", help="Only tasks with all these tags (comma-separated)."),
    backend: str | None = typer.Option(None, "--backend", help="Sandbox backend: bwrap (default), local, docker."),
) -> None:
    """Check that tasks are solvable and not trivially passed: the oracle (solution/solve.sh)
    must pass every task and the do-nothing policy must pass none. Exits 1 when a task fails
    either check, listing it."""
    from posttrain.agent.loop import run_episodes
    from posttrain.agent.policies import NopPolicy, OraclePolicy
    from posttrain.models.loading import load_tokenizer

    try:
        task_list = _load(tasks, names, tags)
        tokenizer = load_tokenizer("smollm2-135m")
        passed = {}
        for policy in (OraclePolicy(), NopPolicy()):
            progress, ended = _progress(len(task_list), policy.name)
            with progress:
                trajectories = run_episodes(task_list, policy, tokenizer, backend=backend, on_episode_end=ended)
            passed[policy.name] = {t.task_id for t in trajectories if t.reward and t.reward.passed}
    except PosttrainError as exc:
        fail(str(exc))
    oracle_failed = sorted({t.id for t in task_list} - passed["oracle"])
    nop_passed = sorted(passed["nop"])
    report = {
        "tasks": len(task_list),
        "oracle_passed": len(passed["oracle"]),
        "nop_passed": len(nop_passed),
        "oracle_failed": oracle_failed,
        "nop_passed_tasks": nop_passed,
    }
    emit_json(report, None)
    if oracle_failed or nop_passed:
        raise typer.Exit(code=1)
