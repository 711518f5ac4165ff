"""Training runs as jobs on a Ray cluster, through Ray's own job submission API
(`ray.job_submission.JobSubmissionClient`, the head's dashboard address, e.g.
http://HEAD:8265): submit returns at once with the job's id; list, status, logs and stop
address it later from any machine.

    job = submit_training(address, config_text, out="runs/a", env={"AWS_ENDPOINT_URL": ...})
    status(address, job)  ->  PENDING | RUNNING | SUCCEEDED | FAILED | STOPPED
    logs(address, job); stop(address, job); list_jobs(address)

The job runs `python -m posttrain.cli train config.toml --out OUT` on the cluster, with the
config uploaded as its working directory (Ray's runtime_env); the cluster's Python must have
posttrain installed, and --out is a path on the cluster (or publish with [storage] url).
Addresses and credentials follow Ray's conventions (RAY_API_SERVER_ADDRESS, RAY_AUTH_MODE and
RAY_AUTH_TOKEN where the cluster requires a token).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from posttrain.errors import PosttrainError

ADDRESS_ENV = "RAY_API_SERVER_ADDRESS"
ADDRESS_HELP = f"The cluster's job API, the head's dashboard (http://HEAD:8265); default: ${ADDRESS_ENV}."


@dataclass
class JobInfo:
    job_id: str
    status: str
    entrypoint: str
    message: str | None


def default_address(address: str | None) -> str:
    address = address or os.environ.get(ADDRESS_ENV)
    if not address:
        raise PosttrainError(f"no cluster address: give --address http://HEAD:8265 or set {ADDRESS_ENV}")
    return address


def _client(address: str | None):
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    from ray.job_submission import JobSubmissionClient

    address = default_address(address)
    try:
        return JobSubmissionClient(address)
    except Exception as exc:  # noqa: BLE001 - Ray raises ConnectionError, AuthenticationError, RuntimeError...
        raise PosttrainError(f"{address}: cannot reach the Ray job API: {str(exc).splitlines()[0]}") from None


def submit_training(
    address: str | None,
    config_text: str,
    out: str,
    resume: bool = False,
    nproc: int | None = None,
    env: dict[str, str] | None = None,
) -> str:
    """Submit `posttrain train` of this config to the cluster; the job id, at once."""
    args = ["config.toml", "--out", out, *(["--resume"] if resume else []), *([f"--nproc={nproc}"] if nproc else [])]
    entrypoint = " ".join(["python", "-m", "posttrain.cli", "train", *args])
    client = _client(address)
    with tempfile.TemporaryDirectory(prefix="posttrain-job-") as folder:
        (Path(folder) / "config.toml").write_text(config_text)
        runtime_env = {"working_dir": folder, "env_vars": {"RAY_USAGE_STATS_ENABLED": "0", **(env or {})}}
        return client.submit_job(entrypoint=entrypoint, runtime_env=runtime_env)


def list_jobs(address: str | None) -> list[JobInfo]:
    return [
        JobInfo(job.submission_id or job.job_id, str(job.status.value), job.entrypoint, job.message)
        for job in _client(address).list_jobs()
    ]


def status(address: str | None, job_id: str) -> str:
    return str(_known(address, job_id).get_job_status(job_id).value)


def logs(address: str | None, job_id: str) -> str:
    return _known(address, job_id).get_job_logs(job_id)


def stop(address: str | None, job_id: str) -> bool:
    """Ask the cluster to stop the job; False when it had already ended."""
    return _known(address, job_id).stop_job(job_id)


def _known(address: str | None, job_id: str):
    client = _client(address)
    try:
        client.get_job_info(job_id)
    except RuntimeError as exc:
        raise PosttrainError(f"no job {job_id!r} at {default_address(address)}: {str(exc).splitlines()[0]}") from None
    return client
