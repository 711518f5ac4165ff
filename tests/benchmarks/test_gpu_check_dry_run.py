"""scripts/gpu_check.sh's checks as a dry run on the CPU at tiny sizes: the same code paths the GPU
run takes (device trainer against the fp32 CPU trainer, the hf engine on the device, a 1-rank
FSDP2 step under torch.distributed.run, here on gloo), and the JSON it writes."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_dry_run_passes_every_check_and_records_the_machine(tmp_path):
    out = tmp_path / "gpu_check.json"
    tiny = ["--prompts", "2", "--group-size", "2", "--prompt-tokens", "20", "--completion-tokens", "8"]
    proc = subprocess.run(
        [str(ROOT / "scripts" / "gpu_check.sh"), "--device", "cpu", "--tiny", *tiny, "--steps", "1", "--warmup", "0"]
        + ["--out", str(out)],
        capture_output=True,
        text=True,
        env=dict(os.environ, OMP_NUM_THREADS="1", PYTHON=sys.executable),
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report == json.loads(proc.stdout)
    assert report["failed"] == []
    assert (
        report["machine"]["device"] == "cpu" and report["machine"]["torch"] and "model_name" in report["machine"]["cpu"]
    )
    agreement = report["agreement"]
    assert agreement["loss_cpu_fp32"] > 1.0  # an NLL over a 512-word vocabulary, not a loss near 0
    assert agreement["grad_cosine"] > 0.98 and agreement["loss_rel_diff"] < 0.05
    assert report["train"]["tokens_per_s"] > 0 and report["train"]["step_s"] > 0
    assert report["generation"]["engine_device"] == "cpu" and report["generation"]["generated_tokens"] > 0
    nproc = report["nproc"]
    assert nproc["backend"] == "gloo" and nproc["world_size"] == 1 and nproc["param_devices"] == ["cpu"]
    assert nproc["loss_abs_diff"] < 1e-4
