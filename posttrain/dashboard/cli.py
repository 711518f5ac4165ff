"""`posttrain dashboard`: serve the web dashboard over run, eval and inspect directories."""

from __future__ import annotations

from pathlib import Path

import typer

from posttrain.console import console, fail
from posttrain.errors import PosttrainError
from posttrain.ports import check_port_free


def dashboard_command(
    directories: list[Path] = typer.Argument(
        ..., help="Run directories (posttrain train/sft --out), eval runs (posttrain eval --out), inspections."
    ),
    port: int = typer.Option(8765, "--port", "-p", min=1, max=65535, help="Port to listen on."),
    host: str = typer.Option(
        "127.0.0.1", "--host", help="Address to listen on; 0.0.0.0 serves other machines (nothing is authenticated)."
    ),
) -> None:
    """A local web app over the directories: runs with their status and held-out results;
    curves per domain that update while a run trains; each step's samples with their tokens
    coloured by engine logprob and advantage; agent episodes turn by turn; eval and inspect
    results. Reads the directories; writes nothing into them. Ctrl-C stops it."""
    try:
        import uvicorn

        from posttrain.dashboard.app import create_app
    except ImportError as exc:
        fail(f"the dashboard needs FastAPI and uvicorn ({exc.name} is missing): pip install 'posttrain[dashboard]'")
    try:
        check_port_free(host, port, "posttrain dashboard --port")
        app = create_app(directories)
    except PosttrainError as exc:
        fail(str(exc))
    for problem in app.state.dashboard.not_shown:  # also named on the page
        console.print(f"not shown: {problem}", highlight=False)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning")
    server = uvicorn.Server(config)
    shown = len(app.state.dashboard.directories)
    console.print(f"dashboard: http://{host}:{port}/  ({shown} directories; Ctrl-C stops)", highlight=False)
    server.run()
