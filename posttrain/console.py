"""The CLI's stderr console and its one-line error exit, shared by every `posttrain` verb."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console

console = Console(stderr=True)


def command_group(help: str | None = None, **options) -> typer.Typer:
    """A `posttrain` command group with the house settings: click's plain help layout (a help
    text names config tables like [sft], which rich markup would swallow, and plain help shows
    flags without a type placeholder and required options as [required]), no shell-completion
    options, no pretty tracebacks (bad input is one `error:` line)."""
    options.setdefault("no_args_is_help", True)
    if help is not None:  # else the callback's docstring is the group's help
        options["help"] = help
    return typer.Typer(rich_markup_mode=None, add_completion=False, pretty_exceptions_enable=False, **options)


def fail(message: str) -> None:
    """Print `error: message` (each line of a message that lists several errors as a line of its
    own) and exit with status 2 (bad input, not a crash)."""
    from rich.markup import escape  # a message may name a table: "[sft]" is text, not markup

    for line in message.splitlines() or [""]:
        console.print(f"[bold red]error:[/] {escape(line)}", highlight=False, soft_wrap=True)
    raise typer.Exit(code=2)


def emit_json(report: dict, out: Path | None) -> None:
    """A benchmark's result: JSON on stdout, and also in `out` when given."""
    text = json.dumps(report, indent=2)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n")
    print(text)


def emit_benchmark(report: dict, out: Path | None) -> None:
    """A benchmark's result with the CPU it ran on (`cpu`: model, flags, torch's kernel level,
    the bf16 probe): figures from different CPUs must never be compared unknowingly."""
    from posttrain import cpu

    emit_json({**report, "cpu": cpu.describe()}, out)


def pass_rate_progress(total: int, label: str):
    """A progress bar over `total` attempts showing the pass rate so far and the ETA, and the
    callback that advances it: report(passed, line, resumed=False). Without a terminal each
    finished attempt is also printed as one line."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=console,
    )
    handle = progress.add_task(label, total=total)
    seen = {"done": 0, "passed": 0}

    def report(passed: bool, line: str, resumed: bool = False) -> None:
        seen["done"] += 1
        seen["passed"] += bool(passed)
        rate = seen["passed"] / seen["done"]
        progress.update(
            handle, advance=1, description=f"{label}  pass rate {rate:.2f}" + (" (resumed)" if resumed else "")
        )
        if not console.is_terminal and not resumed:
            console.print(f"{line}  pass rate so far {rate:.2f}", highlight=False)

    return progress, report


def line_printer(out=None):
    """A function that prints one plain line (no markup, no highlighting) on `out`, a rich
    console, or on stdout when there is none."""
    if out is None:
        return print
    return lambda line: out.print(line, markup=False, highlight=False, soft_wrap=True)
