"""`posttrain jobs`: training runs as jobs on a Ray cluster (list, status, logs, stop).

`posttrain submit` checks the run config as `posttrain train --check` does, which dispatch/ may
not import: pipeline/cli.py defines it."""

from __future__ import annotations

import json
import time

import typer

from posttrain.console import command_group, console, fail, spinner
from posttrain.dispatch.cluster_jobs import ADDRESS_HELP
from posttrain.errors import PosttrainError

app = command_group("Training runs submitted to a Ray cluster (Ray's job submission API).")


@app.command("list")
def list_command(address: str | None = typer.Option(None, "--address", help=ADDRESS_HELP)) -> None:
    """Every job the cluster knows: id, status, entrypoint (JSON lines on stdout)."""
    from posttrain.dispatch.cluster_jobs import list_jobs

    try:
        jobs = list_jobs(address)
    except PosttrainError as exc:
        fail(str(exc))
    for job in jobs:
        console.print(f"{job.job_id}  {job.status:<9}  {job.entrypoint}", highlight=False, soft_wrap=True)
        print(json.dumps(job.__dict__))


@app.command("status")
def status_command(
    job_id: str = typer.Argument(..., help="A job id from posttrain submit."),
    address: str | None = typer.Option(None, "--address", help=ADDRESS_HELP),
    wait: float = typer.Option(0.0, "--wait", min=0.0, help="Wait up to this many seconds for the job to end."),
) -> None:
    """A job's status: PENDING, RUNNING, SUCCEEDED, FAILED or STOPPED (with --wait: once it ended)."""
    from posttrain.dispatch.cluster_jobs import status

    try:
        state = status(address, job_id)
        deadline = time.monotonic() + wait
        with spinner(f"job {job_id}: {state}") as shown:
            while state in ("PENDING", "RUNNING") and time.monotonic() < deadline:
                time.sleep(1.0)
                state = status(address, job_id)
                shown.update(f"job {job_id}: {state}")
    except PosttrainError as exc:
        fail(str(exc))
    print(state)


@app.command("logs")
def logs_command(
    job_id: str = typer.Argument(..., help="A job id from posttrain submit."),
    address: str | None = typer.Option(None, "--address", help=ADDRESS_HELP),
) -> None:
    """A job's output so far (the run's progress and, once done, its summary)."""
    from posttrain.dispatch.cluster_jobs import logs

    try:
        print(logs(address, job_id), end="")
    except PosttrainError as exc:
        fail(str(exc))


@app.command("stop")
def stop_command(
    job_id: str = typer.Argument(..., help="A job id from posttrain submit."),
    address: str | None = typer.Option(None, "--address", help=ADDRESS_HELP),
) -> None:
    """Stop a job (Ray sends its process SIGTERM, then SIGKILL); a resubmit with --resume continues it."""
    from posttrain.dispatch.cluster_jobs import stop

    try:
        stopped = stop(address, job_id)
    except PosttrainError as exc:
        fail(str(exc))
    console.print(f"job {job_id}: {'stopping' if stopped else 'had already ended'}", highlight=False)
