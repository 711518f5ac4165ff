"""`posttrain submit` and `posttrain jobs` against a real Ray head started by the test
(`ray start --head` with its dashboard: Ray's job submission API)."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from posttrain.cli import app
from tests.dispatch.ray_nodes import ROOT, free_port, start_head


@pytest.fixture(scope="module")
def ray_head():
    """A one-node Ray cluster of its own with its dashboard (which serves the job API); yields
    the job API's address."""
    pytest.importorskip("aiohttp_cors", reason="needs ray[default] (the dashboard serves the job API)")
    temp = Path(tempfile.mkdtemp(prefix="ptray-", dir="/tmp"))
    dashboard = free_port()
    head = start_head(
        temp,
        dashboard_port=dashboard,
        include_dashboard="true",
        dashboard_host="127.0.0.1",
        num_cpus=1,
        object_store_memory=100_000_000,
    )
    address = f"http://127.0.0.1:{dashboard}"
    try:
        from ray.job_submission import JobSubmissionClient

        deadline = time.monotonic() + 120
        while True:
            assert head.alive(), "ray start --head exited"
            try:
                JobSubmissionClient(address).list_jobs()
                break
            except Exception as exc:  # noqa: BLE001 - not up yet
                assert time.monotonic() < deadline, f"the Ray head's job API did not come up in 120 s: {exc!r}"
                time.sleep(1)
        yield address
    finally:
        head.stop()
        shutil.rmtree(temp, ignore_errors=True)


def cli(*args: str):
    return CliRunner().invoke(app, list(args))


@pytest.mark.slow
def test_submit_returns_a_job_id_and_jobs_follow_it(tmp_path, tiny_config, ray_head):
    address = ray_head
    config, out = tiny_config(steps=1, checkpoint_every=1), tmp_path / "run"
    started = time.monotonic()
    submitted = cli(
        "submit", str(config), "--out", str(out), "--address", address,
        "--env", f"PYTHONPATH={ROOT}", "--env", "OMP_NUM_THREADS=1",
    )  # fmt: skip
    assert submitted.exit_code == 0, submitted.output
    job_id = submitted.stdout.strip().splitlines()[-1]
    assert job_id.startswith("raysubmit_") and time.monotonic() - started < 30  # returned before the run

    waited = cli("jobs", "status", job_id, "--address", address, "--wait", "240")
    assert waited.stdout.strip().splitlines()[-1] == "SUCCEEDED", cli("jobs", "logs", job_id, "--address", address)
    assert (out / "summary.json").is_file() and (out / "checkpoints" / "step-1").is_dir()
    assert '"steps": 1' in cli("jobs", "logs", job_id, "--address", address).stdout
    assert job_id in cli("jobs", "list", "--address", address).stdout

    # a long run, stopped
    long = cli("submit", str(tiny_config(steps=500)), "--out", str(tmp_path / "long"), "--address", address,
               "--env", f"PYTHONPATH={ROOT}")  # fmt: skip
    long_id = long.stdout.strip().splitlines()[-1]
    assert cli("jobs", "stop", long_id, "--address", address).exit_code == 0
    assert cli("jobs", "status", long_id, "--address", address, "--wait", "60").stdout.strip() == "STOPPED"

    unknown = cli("jobs", "logs", "raysubmit_nosuchjob", "--address", address)
    assert unknown.exit_code == 2 and "no job 'raysubmit_nosuchjob'" in unknown.output
