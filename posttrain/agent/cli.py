"""`posttrain agent ...`: run agents on terminal tasks (Harbor format) in sandboxes."""

from __future__ import annotations

from pathlib import Path

import typer

from posttrain.console import argument_or_option, command_group, emit_json, fail
from posttrain.errors import PosttrainError

app = command_group()


@app.callback()
def _agent() -> None:
    """Agents on terminal tasks (Harbor format) in sandboxes.

    To run an agent (oracle, nop or a model) on tasks, with pass@k, failure modes, reports and
    resume, use `posttrain eval --tasks DIR --agent ... --out DIR`. `posttrain agent check`
    is the quick sanity check of a task suite; `posttrain inspect` is the full quality gate."""


@app.command("check")
def check_command(
    path: Path | None = typer.Argument(
        None, metavar="PATH", help="A Harbor task directory, or a directory of them; or give it as --tasks."
    ),
    tasks: Path | None = typer.Option(
        None, "--tasks", metavar="PATH", help="The same as PATH, spelled as posttrain eval spells it."
    ),
    names: str | None = typer.Option(None, "--names", help="Only these tasks (comma-separated names)."),
    tags: str | None = typer.Option(None, "--tags", help="Only tasks with all these tags (comma-separated)."),
    backend: str | None = typer.Option(None, "--backend", help="Sandbox backend: bwrap (default), local, docker."),
) -> None:
    """Check that tasks are solvable and not trivially passed: the oracle (solution/solve.sh)
    must pass every task and the do-nothing policy must pass none. Exits 1 when a task fails
    either check, listing it."""
    tasks = argument_or_option(path, tasks, "--tasks", "posttrain agent check --tasks PATH (or PATH as the argument)")
    from posttrain.agent.suite_check import check_suite

    try:
        report = check_suite(tasks, names, tags, backend)
    except PosttrainError as exc:
        fail(str(exc))
    emit_json(report, None)
    if report["oracle_failed"] or report["nop_passed_tasks"]:
        raise typer.Exit(code=1)
