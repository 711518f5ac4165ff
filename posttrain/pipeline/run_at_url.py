"""`posttrain train --out s3://bucket/runs/NAME`: the run lives at the URL. This machine trains
in a working copy, $POSTTRAIN_CACHE/runs/NAME-HASH (~/.cache/posttrain/runs/... by default),
and publishes to the URL as `[storage] url` does (run_mirror.py): checkpoints whole, manifest
last. The URL is the truth: `--resume` always fetches the run from it (its files and latest
complete checkpoint) into a cleared working copy, so a machine that has never seen the run, or
one whose copy is behind another machine's, resumes from what was published."""

from __future__ import annotations

import shutil
from pathlib import Path

from posttrain.errors import PosttrainError
from posttrain.pipeline.run_mirror import fetch_run
from posttrain.storage.artifact_store import ArtifactStore
from posttrain.storage.directory_at_url import working_copy as url_working_copy


def working_copy(url: str) -> Path:
    return url_working_copy(url, "runs")


def open_working_copy(url: str, resume: bool) -> tuple[Path, str]:
    """The working copy for the run at `url`, ready: fetched from the URL (`resume`) or empty
    (a new run: the URL must not hold one) -> (its path, what was done, in words)."""
    local = working_copy(url)
    published = ArtifactStore(url).exists("config.toml")
    if resume:
        if not published:
            raise PosttrainError(f"--out {url}: no run there (no config.toml) — nothing to resume")
        shutil.rmtree(local, ignore_errors=True)
        step = fetch_run(url, local)
        return local, f"fetched {url} into {local}: " + (
            f"its checkpoint at step {step}" if step else "no checkpoint yet"
        )
    if published:
        raise PosttrainError(f"--out {url}: a run is already there; continue it with --resume or choose another --out")
    shutil.rmtree(local, ignore_errors=True)  # a start that published nothing: nothing there to keep
    return local, f"working copy of {url}: {local}"
