"""`posttrain tasks ...`: generate terminal task directories, list the generated families."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import typer

from posttrain.console import command_group, emit_json, fail, print_table, progress_bar
from posttrain.errors import PosttrainError

app = command_group("Task sources: what each accepts; generated terminal task families (Harbor directories).")


@app.command("generate")
def generate_command(
    families: str = typer.Argument(
        ..., help="A family, several joined by commas, or 'all' (see `posttrain tasks families`)."
    ),
    count: int = typer.Option(10, "--count", "-n", min=1, help="How many task directories to write."),
    seed: int = typer.Option(0, "--seed", help="Seed of the whole batch: the same seed writes the same tasks."),
    difficulty: str = typer.Option("1,2,3", "--difficulty", "-d", help="Difficulties 1-3, e.g. 2 or 1,3."),
    templates: str = typer.Option(
        "", "--templates", help="Only these template ids, joined by commas, e.g. git/d1/tag-release (default: all)."
    ),
    out: Path = typer.Option(
        ..., "--out", "-o", help="Folder to write the task directories into (created if missing)."
    ),
) -> None:
    """Write COUNT Harbor task directories of the given families into OUT, spread over the
    families and difficulties as a `terminal-gen:` domain spreads them (task i: family
    i mod F, then the next difficulty every F tasks). Each directory holds task.toml,
    instruction.md, environment/, tests/ and solution/ (solve.sh and steps.json).

    Example: posttrain tasks generate git,sqlite --count 12 --difficulty 1,2 --out tasks/gen
    """
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

    from posttrain.tasks.terminal_gen import TerminalGenSource, family_names, write_task
    from posttrain.tasks.terminal_gen.registry import parse_template_id

    try:
        levels = [int(d) for d in difficulty.split(",") if d.strip()]
    except ValueError:
        fail(f"--difficulty: {difficulty!r} is not a list of integers 1-3 (e.g. 1,2)")
    try:
        chosen = [t.strip() for t in templates.split(",") if t.strip()] or None
        for template in chosen or []:
            parse_template_id(template, field="--templates")
        source = TerminalGenSource("generate", family_names(families), levels, seed=seed, size=count, templates=chosen)
    except PosttrainError as exc:
        fail(str(exc).removeprefix("domain 'generate': "))
    progress = progress_bar(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    written = []
    with progress:
        handle = progress.add_task("generating", total=count)
        for index in range(count):
            task = source.generated(index)
            written.append(str(write_task(task, out)))
            progress.update(handle, advance=1, description=f"generating  {task.name}")
    emit_json({"out": str(out), "count": len(written), "tasks": [Path(p).name for p in written]}, None)


@app.command("families")
def families_command() -> None:
    """List the generated terminal task families: the skill each trains and, per difficulty
    1, 2 and 3, its templates (ids <family>/d<difficulty>/<template>). Names are never cut
    short: at a terminal they fold within its width; piped, the table is as wide as they are."""
    from rich.table import Table

    from posttrain.tasks.terminal_gen import FAMILIES

    table = Table("family", "skill", "d1", "d2", "d3", show_lines=True)
    for family in FAMILIES.values():
        table.add_row(family.name, family.skill, *("\n".join(t.slug for t in family.templates[d]) for d in (1, 2, 3)))
    print_table(table)


@app.command("sources")
def sources_command(
    as_json: bool = typer.Option(False, "--json", help="Print the list as JSON instead of text."),
) -> None:
    """List every kind of task source a [[domains]] entry can name and what each accepts: every
    reasoning-gym generator, every terminal-gen family and scene difficulty by name, and the
    files and folders the others read. Names are never cut short, whatever the width."""
    import json
    from dataclasses import asdict

    from posttrain.tasks.source_catalogue import source_catalogue

    catalogue = source_catalogue()
    width = max(shutil.get_terminal_size().columns, 40)
    if as_json:
        print(json.dumps([asdict(kind) for kind in catalogue], indent=2))
        return
    for kind in catalogue:
        print(f"{kind.source}\n  {kind.about}")
        if kind.accepts:
            print(
                textwrap.fill(
                    ", ".join(kind.accepts),
                    width=width,
                    initial_indent="  ",
                    subsequent_indent="  ",
                    break_on_hyphens=False,
                    break_long_words=False,
                )
            )
