"""`posttrain submit`: a training run checked on this machine, then handed to a Ray cluster as a job."""

from __future__ import annotations

import tempfile
from pathlib import Path

from posttrain.config import dump_config
from posttrain.dispatch.cluster_jobs import submit_training
from posttrain.pipeline.training_run import check_run


def submit_run(
    config: Path, out: str, address: str | None, *, resume: bool, nproc: int | None, env: dict[str, str]
) -> str:
    """Check `config` as `posttrain train --check` does (its task paths made absolute in the text
    sent) and submit `posttrain train` into `out` on the cluster -> the job id. With `resume` the
    cluster's run directory has its config; this one only travels along, unchecked."""
    if resume:
        text = config.read_text()
    else:  # checked against a directory that cannot exist here: OUT is the cluster's
        with tempfile.TemporaryDirectory() as nowhere:
            text = dump_config(check_run(config, Path(nowhere) / "run", False, world_size=nproc).run.config)
    return submit_training(address, text, out, resume=resume, nproc=nproc, env=env)
