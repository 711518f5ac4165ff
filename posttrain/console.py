"""The CLI's stderr console and its one-line error exit, shared by every `posttrain` verb."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console

console = Console(stderr=True)


def fail(message: str) -> None:
    """Print `error: message` on one line and exit with status 2 (bad input, not a crash)."""
    console.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(code=2)


def emit_json(report: dict, out: Path | None) -> None:
    """A benchmark's result: JSON on stdout, and also in `out` when given."""
    text = json.dumps(report, indent=2)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n")
    print(text)
