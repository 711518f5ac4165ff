"""`posttrain inspect` as one call: the task directories chosen (--names, --tags), inspected
into --out (a directory, or a URL's working copy published however the command ends) under a
progress bar that counts the verdicts so far."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

from posttrain.console import draws_live, line_printer, progress_bar
from posttrain.quality.gate import run_inspection
from posttrain.quality.inspector import InspectOptions, TaskReport, select_dirs, task_dirs
from posttrain.storage.directory_at_url import output_directory


def inspect_suite(
    path: Path,
    out: str,
    options: InspectOptions,
    *,
    names: str | None,
    tags: str | None,
    policy: str | None,
    samples: int,
    max_steps: int,
    reply_tokens: int,
    console: Console,
) -> dict:
    """Inspect the chosen task directories under `path` into `out` -> the report (report.json's)."""
    dirs = select_dirs(task_dirs(path), names, tags)
    progress, on_task = _verdict_progress(len(dirs), console)
    with output_directory(out, fetch=False, say=line_printer(console)) as directory, progress:
        return run_inspection(
            path,
            directory,
            options,
            policy=policy,
            samples=samples,
            policy_max_steps=max_steps,
            policy_reply_tokens=reply_tokens,
            on_task=on_task,
            dirs=dirs,
        )


def _verdict_progress(total: int, console: Console):
    """A progress bar over `total` tasks showing how many got each verdict, and the callback
    that advances it. Without a terminal each finished task is also printed as one line."""
    progress = progress_bar(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), out=console
    )
    handle = progress.add_task("inspecting", total=total)
    counts: dict[str, int] = {}

    def on_task(report: TaskReport) -> None:
        counts[report.verdict] = counts.get(report.verdict, 0) + 1
        shown = ", ".join(f"{v} {n}" for v, n in sorted(counts.items()))
        progress.update(handle, advance=1, description=f"inspecting  {shown}")
        if not draws_live(console):
            console.print(
                f"{report.id}: {report.verdict}"
                + (" (stored inspection)" if report.cached_from else "")
                + (f" ({report.reason[:160]})" if report.reason else ""),
                highlight=False,
            )

    return progress, on_task
