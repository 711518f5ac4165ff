"""The trainer's process group, as `torch.distributed.run` (torchrun) sets it up: each process
finds its rank and the world size in the environment (RANK, WORLD_SIZE, MASTER_ADDR, ...)."""

from __future__ import annotations

import os

import torch
import torch.distributed as dist


def launched_world_size() -> int:
    """How many trainer processes torchrun started (1 when this process was not started by it)."""
    return int(os.environ.get("WORLD_SIZE", "1"))


def launched_rank() -> int:
    return int(os.environ.get("RANK", "0"))


def backend() -> str:
    """NCCL where there is a GPU, gloo on CPU (FSDP2 runs on both)."""
    return "nccl" if torch.cuda.is_available() else "gloo"


def join_process_group() -> None:
    """Join the group torchrun set up (once; a no-op when already joined)."""
    if dist.is_initialized():
        return
    if torch.cuda.is_available():
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group(backend())


def leave_process_group() -> None:
    if dist.is_initialized():
        dist.destroy_process_group()
