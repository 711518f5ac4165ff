"""A run on two trainer ranks (`posttrain train --nproc 2`: torch.distributed.run, FSDP2 on gloo)
publishing to S3 (a real S3-compatible server), stopped by an error after its first sharded
checkpoint, resumes on a "machine" that has never seen it: a fresh directory fed only from the
bucket (`posttrain train --resume --from`), on one process."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from posttrain.cli import app
from posttrain.errors import PosttrainError
from posttrain.pipeline.driver import train
from posttrain.storage.artifact_store import ArtifactStore

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_a_sharded_run_published_to_s3_resumes_elsewhere_on_one_process(tmp_path, tiny_config, s3_bucket):
    url = f"s3://{s3_bucket}/runs/tiny"
    config = tiny_config(steps=2, checkpoint_every=1)
    config.write_text(config.read_text() + f'\n[storage]\nurl = "{url}"\n')
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "POSTTRAIN_FAULTS": "raise:train_step@2"}
    first = subprocess.run(
        [sys.executable, "-m", "posttrain.cli", "train", str(config), "--out", str(tmp_path / "first"), "--nproc", "2"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert first.returncode != 0 and "FaultInjected" in first.stderr, first.stderr[-3000:]
    assert "starting 2 trainer processes" in first.stderr
    step1 = tmp_path / "first" / "checkpoints" / "step-1"
    assert sorted(p.name for p in (step1 / "shards").iterdir()) == [".metadata", "__0_0.distcp", "__1_0.distcp"]
    record = json.loads((tmp_path / "first" / "metrics.jsonl").read_text().splitlines()[0])
    assert record["step"] == 1 and record["train_ranks"] == 2.0
    store = ArtifactStore(url)
    assert store.published_steps() == [1] and store.exists("checkpoints/step-1/shards/__1_0.distcp")
    assert store.exists("metrics.jsonl") and store.exists("trajectories.sqlite") and not store.exists("summary.json")

    # the run's config asks for two ranks: a plain process refuses, and says how to run it
    with pytest.raises(PosttrainError, match="--nproc 2"):
        train(None, tmp_path / "first", resume=True)

    fresh = tmp_path / "elsewhere"
    done = CliRunner().invoke(app, ["train", "--resume", "--out", str(fresh), "--from", url, "--nproc", "1"])
    assert done.exit_code == 0, done.output[-3000:]
    assert f"fetched {url}" in done.output and "checkpoint at step 1" in done.output
    records = [json.loads(line) for line in (fresh / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [1, 2] and "train_ranks" not in records[1]
    assert not (fresh / "checkpoints" / "step-2" / "shards").exists()  # one process: trainer_state.pt
    assert store.published_steps() == [1, 2]  # keep_checkpoints = 2
    summary = json.loads(store.fs.cat_file(f"{store.root}/summary.json"))
    assert summary["steps"] == 2 and summary["resumed"]

    # --from refuses to download over an existing run
    again = CliRunner().invoke(app, ["train", "--resume", "--out", str(fresh), "--from", url])
    assert again.exit_code == 2 and "not empty" in again.output
