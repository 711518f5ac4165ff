"""`posttrain submit` and `posttrain jobs`: training runs as jobs on a Ray cluster."""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import typer

from posttrain.console import command_group, console, fail
from posttrain.errors import PosttrainError

ADDRESS_HELP = "The cluster's job API, the head's dashboard (http://HEAD:8265); default: $RAY_API_SERVER_ADDRESS."
app = command_group("Training runs submitted to a Ray cluster (Ray's job submission API).")


def submit_command(
    config: Path = typer.Argument(..., help="Run config (TOML); checked here before it is submitted."),
    out: str = typer.Option(..., "--out", "-o", help="The run directory, a path on the cluster's machines."),
    address: str | None = typer.Option(None, "--address", help=ADDRESS_HELP),
    resume: bool = typer.Option(False, "--resume", help="Continue the run in --out (on the cluster)."),
    nproc: int | None = typer.Option(None, "--nproc", min=1, help="Trainer processes (FSDP2), as for train."),
    env: list[str] = typer.Option([], "--env", help="KEY=VALUE for the job's environment, repeatable."),
) -> None:
    """Submit `posttrain train CONFIG --out OUT` to a Ray cluster and return at once: prints the job id.

    \b
    The config is checked here first (keys, values, task files: as
    `posttrain train --check`), its task paths made absolute, and uploaded
    with the job. Follow it with `posttrain jobs status|logs|stop JOB_ID`.
    """
    from posttrain.config import dump_config
    from posttrain.pipeline.training_run import check_run
    from posttrain.scheduler.cluster_jobs import submit_training

    try:
        variables = dict(_key_value(item) for item in env)
        if resume:  # the cluster's run directory has its config; this one only travels along
            text = config.read_text()
        else:  # checked against a directory that cannot exist here: OUT is the cluster's
            with tempfile.TemporaryDirectory() as nowhere:
                text = dump_config(check_run(config, Path(nowhere) / "run", False, world_size=nproc).run.config)
        job_id = submit_training(address, text, out, resume=resume, nproc=nproc, env=variables)
    except PosttrainError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"{config}: {exc.strerror}")
    console.print(f"submitted: follow with posttrain jobs logs {job_id}", highlight=False)
    print(job_id)


def _key_value(item: str) -> tuple[str, str]:
    key, sep, value = item.partition("=")
    if not sep or not key:
        raise PosttrainError(f"--env {item!r}: expected KEY=VALUE")
    return key, value


@app.command("list")
def list_command(address: str | None = typer.Option(None, "--address", help=ADDRESS_HELP)) -> None:
    """Every job the cluster knows: id, status, entrypoint (JSON lines on stdout)."""
    from posttrain.scheduler.cluster_jobs import list_jobs

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
    from posttrain.scheduler.cluster_jobs import status

    try:
        state = status(address, job_id)
        deadline = time.monotonic() + wait
        with console.status(f"job {job_id}: {state}") as shown:
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
    from posttrain.scheduler.cluster_jobs import logs

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
    from posttrain.scheduler.cluster_jobs import stop

    try:
        stopped = stop(address, job_id)
    except PosttrainError as exc:
        fail(str(exc))
    console.print(f"job {job_id}: {'stopping' if stopped else 'had already ended'}", highlight=False)
