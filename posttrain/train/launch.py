"""Start the trainer's processes with PyTorch's own launcher, torch.distributed.run (torchrun):
`posttrain train --nproc N` runs itself again as N ranks on this machine. For several machines,
run torchrun yourself on each (`--nnodes`, `--rdzv-endpoint`, `-m posttrain.cli train ...`)."""

from __future__ import annotations

import os
import subprocess
import sys

from posttrain.train.device import DEVICE_ENV


def torchrun_command(nproc: int, posttrain_args: list[str]) -> list[str]:
    return [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",  # one machine: a rendezvous on a free local port
        f"--nproc-per-node={nproc}",
        "-m",
        "posttrain.cli",
        *posttrain_args,
    ]


def run_ranks(nproc: int, posttrain_args: list[str], device: str = "cpu") -> int:
    """Run `posttrain POSTTRAIN_ARGS` as `nproc` ranks training on `device` ("cpu" or "cuda":
    each rank then joins with gloo or NCCL); their exit code (torchrun stops every rank when one
    fails)."""
    env = {**os.environ, DEVICE_ENV: device}
    return subprocess.run(torchrun_command(nproc, posttrain_args), check=False, env=env).returncode
