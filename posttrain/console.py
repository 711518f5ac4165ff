"""The CLI's stderr console, its one-line error exit, progress bars and tables, and the shared
handling of a renamed flag and of `--tasks PATH`: what every `posttrain` verb says, said alike."""

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


def draws_live(out: Console = console) -> bool:
    """Whether `out` may redraw a progress bar or a spinner in place: only on a real terminal.
    FORCE_COLOR or TTY_COMPATIBLE=1 (colours in a CI log) make rich treat a pipe as a terminal,
    and every redraw would then land in the log as a line of its own."""
    isatty = getattr(out.file, "isatty", None)
    try:
        return out.is_terminal and bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def progress_bar(*columns, out: Console | None = None, **options):
    """A rich Progress over `columns` on `out` (default: the CLI's stderr console) that draws only
    where draws_live(out): elsewhere it prints nothing, and the command prints a plain line per
    finished item instead."""
    from rich.progress import Progress

    out = out or console
    return Progress(*columns, console=out, disable=not draws_live(out), **options)


class _NoSpinner:
    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None

    def update(self, *args, **kwargs) -> None:
        return None


def spinner(text: str, out: Console = console):
    """`with spinner(text) as shown: ... shown.update(text)`: rich's status spinner where
    draws_live(out), nothing elsewhere (no frames in a log)."""
    return out.status(text) if draws_live(out) else _NoSpinner()


def print_table(table) -> None:
    """A rich table on stdout that never cuts a cell short: at a terminal a long name folds
    onto the next line of its cell; elsewhere (a pipe, a file) the table is as wide as its
    longest cells, not 80 columns."""
    out = Console()
    for column in table.columns:
        column.overflow = "fold"
    if not draws_live(out):
        out = Console(width=max(out.width, out.measure(table, options=out.options.update(width=10_000)).maximum))
    out.print(table)


def renamed_option(value, old_value, old: str, new: str):
    """The value of an option given as `new` or by its deprecated spelling `old` (which still
    works, with one warning line saying what to write instead); None when neither was given."""
    if old_value is None:
        return value
    if value is not None:
        fail(f"{old} and {new} are one option: give {new}")
    console.print(f"warning: {old} is deprecated here; write {new}", markup=False, highlight=False, soft_wrap=True)
    return old_value


def argument_or_option(argument, option, flag: str, usage: str):
    """A value a command takes as its argument or as `flag`, the spelling the other commands
    share (`--tasks PATH`): whichever was given; both only when they agree."""
    if argument is not None and option is not None and argument != option:
        fail(f"{flag} {option} and the argument {argument} name different things: give one")
    value = option if option is not None else argument
    if value is None:
        fail(f"{flag} is required: {usage}")
    return value


def pass_rate_progress(total: int, label: str):
    """A progress bar over `total` attempts showing the pass rate so far and the ETA, and the
    callback that advances it: report(passed, line, resumed=False). Without a terminal each
    finished attempt is also printed as one line."""
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    progress = progress_bar(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
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
        if not draws_live() and not resumed:
            console.print(f"{line}  pass rate so far {rate:.2f}", highlight=False)

    return progress, report


def line_printer(out=None):
    """A function that prints one plain line (no markup, no highlighting) on `out`, a rich
    console, or on stdout when there is none."""
    if out is None:
        return print
    return lambda line: out.print(line, markup=False, highlight=False, soft_wrap=True)
