"""`posttrain train --nproc 2`: a real run on two trainer ranks (torch.distributed.run, FSDP2 on
gloo), stopped by an error after its first checkpoint, then resumed by one process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from posttrain.errors import PosttrainError
from posttrain.pipeline.driver import train, train_checked
from posttrain.pipeline.training_run import check_run

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_two_rank_run_checkpoints_shards_and_resumes_on_one_process(tmp_path, tiny_config):
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "POSTTRAIN_FAULTS": "raise:train_step@2"}
    command = [sys.executable, "-m", "posttrain.cli", "train", str(tiny_config(steps=2, checkpoint_every=1))]
    done = subprocess.run(
        [*command, "--out", str(out), "--nproc", "2"], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode != 0 and "FaultInjected" in done.stderr, done.stderr[-3000:]
    assert "starting 2 trainer processes" in done.stderr
    step1 = out / "checkpoints" / "step-1"
    assert sorted(p.name for p in (step1 / "shards").iterdir()) == [".metadata", "__0_0.distcp", "__1_0.distcp"]
    record = json.loads((out / "metrics.jsonl").read_text().splitlines()[0])
    assert record["step"] == 1 and record["train_ranks"] == 2.0

    # the run's config asks for two ranks: a plain process refuses, and says how to run it
    with pytest.raises(PosttrainError, match="--nproc 2"):
        train(None, out, resume=True)
    summary = train_checked(check_run(None, out, resume=True, world_size=1))  # what --nproc 1 does
    assert summary["steps"] == 2 and summary["resumed"]
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [1, 2] and "train_ranks" not in records[1]
    assert not (out / "checkpoints" / "step-2" / "shards").exists()  # one process: trainer_state.pt
