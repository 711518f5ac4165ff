"""The CLI's stderr console and its one-line error exit, shared by every `posttrain` verb."""

from __future__ import annotations

import typer
from rich.console import Console

console = Console(stderr=True)


def fail(message: str) -> None:
    """Print `error: message` on one line and exit with status 2 (bad input, not a crash)."""
    console.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(code=2)
