"""The trainer's process group, as `torch.distributed.run` (torchrun) sets it up: each process
finds its rank and the world size in the environment (RANK, WORLD_SIZE, MASTER_ADDR, ...)."""

from __future__ import annotations

import os
from datetime import timedelta

import torch
import torch.distributed as dist

from posttrain.train.device import DEVICE_ENV


def launched_world_size() -> int:
    """How many trainer processes torchrun started (1 when this process was not started by it)."""
    return int(os.environ.get("WORLD_SIZE", "1"))


def launched_rank() -> int:
    return int(os.environ.get("RANK", "0"))


def backend() -> str:
    """NCCL for a trainer on CUDA, gloo on the CPU (FSDP2 runs on both). The trainer's device is
    the one its launcher named (DEVICE_ENV, set by `posttrain train --nproc N`); ranks started
    by hand without it use NCCL where there is a GPU."""
    named = os.environ.get(DEVICE_ENV)
    on_cuda = named == "cuda" if named else torch.cuda.is_available()
    return "nccl" if on_cuda else "gloo"


def join_process_group() -> None:
    """Join the group torchrun set up (once; a no-op when already joined)."""
    if dist.is_initialized():
        return
    if backend() == "nccl":
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group(backend())


LEAVE_TIMEOUT = timedelta(seconds=60)


def leave_process_group(wait: bool = True) -> None:
    """Wait for every rank to get here, then tear the group down. A rank that tears down while
    another still finishes its part of the last collective can abort the process (seen once in
    about 85 two-rank runs on gloo: std::terminate in the rank that left first). The wait is
    bounded where the backend allows it (gloo), so a rank that died does not hold the others.
    wait=False: a rank that failed mid-way, whose peers may be inside another collective,
    leaves at once (their collective then fails instead of waiting)."""
    if not dist.is_initialized():
        return
    try:
        if wait and dist.get_backend() == "gloo":
            dist.monitored_barrier(timeout=LEAVE_TIMEOUT)
        elif wait:
            dist.barrier()
    finally:
        dist.destroy_process_group()
