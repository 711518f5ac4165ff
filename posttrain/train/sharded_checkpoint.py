"""A sharded trainer's checkpoint files, beside the Hugging Face model of checkpoints/step-N/:

shards/        torch.distributed.checkpoint (DCP): the model's and the optimizer's state, each
               rank writing its own shards; readable at any world size (DCP reshards on load),
               by one process without a process group too
model.safetensors + config.json
               the full weights, gathered parameter by parameter, written by rank 0: what
               transformers and vLLM load
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from pathlib import Path

import torch
import torch.distributed.checkpoint as dcp
from safetensors.torch import save_file
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict

SHARDS = "shards"


def save_shards(directory: Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> None:
    """Every rank's shards into directory/shards (a collective when there is a process group)."""
    model_state, optim_state = get_state_dict(model, optimizer)
    dcp.save({"model": model_state, "optimizer": optim_state}, checkpoint_id=str(directory / SHARDS))


def load_shards(directory: Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> None:
    """The model's and optimizer's state from directory/shards, resharded to this world size
    (a single process without a process group reads them whole)."""
    model_state, optim_state = get_state_dict(model, optimizer)
    state = {"model": model_state, "optimizer": optim_state}
    with warnings.catch_warnings():  # one process without a group is a case DCP supports, and warns about
        warnings.filterwarnings("ignore", message="torch.distributed is disabled")
        dcp.load(state, checkpoint_id=str(directory / SHARDS))
    set_state_dict(model, optimizer, model_state_dict=state["model"], optim_state_dict=state["optimizer"])


def has_shards(directory: Path) -> bool:
    return (directory / SHARDS).is_dir()


def save_full_model(directory: Path, model: torch.nn.Module, named_tensors: Iterable[tuple[str, torch.Tensor]]):
    """The Hugging Face files of a sharded model: its config under the original class name
    (FSDP2 renames the class to FSDP<name>) and `named_tensors` (full weights; tied ones once)."""
    config = model.config
    original = next(c for c in type(model).__mro__ if c.__name__ == type(model).__name__.removeprefix("FSDP"))
    config.architectures = [original.__name__]
    config.save_pretrained(directory)
    save_file(
        {name: tensor.contiguous() for name, tensor in named_tensors},
        directory / "model.safetensors",
        metadata={"format": "pt"},
    )
