"""Where the trainer runs: `[train] device` resolved on this machine.

auto   CUDA when torch sees a GPU, unless the builtin engine serves the rollouts: the
       trainer then runs that engine's CPU kernels (oneDNN linear layers, its attention) to
       recompute its logprobs to the bit, so it stays on the CPU
cpu    the CPU (fp32, or bf16 autocast on the CPU)
cuda   the current CUDA device (each trainer rank's own: process_group.join_process_group
       sets it from LOCAL_RANK); bf16 autocast there when [optim] bf16_autocast is on
"""

from __future__ import annotations

import torch

from posttrain.errors import PosttrainError

# The launcher of several trainer ranks names their device here, so every rank joins the process
# group with the backend for it (process_group.backend) before any config reaches it.
DEVICE_ENV = "POSTTRAIN_TRAIN_DEVICE"


def resolve_device(setting: str, engine_backend: str) -> torch.device:
    """The device for `[train] device = setting` with `[engine] backend = engine_backend`; a
    one-line PosttrainError where the machine cannot give it."""
    if setting == "auto":
        wanted_cuda = torch.cuda.is_available() and engine_backend != "builtin"
        return torch.device("cuda" if wanted_cuda else "cpu")
    if setting == "cuda" and not torch.cuda.is_available():
        raise PosttrainError(
            'train.device = "cuda": torch sees no CUDA GPU on this machine (torch.cuda.is_available() is False, '
            f'torch {torch.__version__}); set device = "cpu" or "auto", or run where a GPU and a CUDA build '
            "of torch are"
        )
    if setting not in ("cpu", "cuda"):
        raise PosttrainError(f'train.device = "{setting}": choose "auto", "cpu" or "cuda"')
    return torch.device(setting)
