"""checkpoints/step-N/: the model in Hugging Face format (loadable by transformers and vLLM),
plus `trainer_state.pt` (optimizer, scheduler, RNG; a sharded trainer keeps its model and
optimizer state in `shards/`: posttrain.train.sharded_checkpoint), `state.json` (step, data cursor,
policy version) and, for runs driven by the rollout dispatcher, `pipeline_state.pt` (buffered
groups, rollouts in flight; a preemption notice adds a newer pipeline_state-K.pt to the last
checkpoint when the trainer has not moved since). Written to a temp dir, fsynced and renamed,
so a kill never leaves a half checkpoint that looks complete."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from posttrain.faults import fault_point

_STEP_DIR = re.compile(r"^step-(\d+)$")
_PIPELINE_STATE = re.compile(r"^pipeline_state(?:-(\d+))?\.pt$")


def rng_state() -> dict[str, Any]:
    return {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}


def restore_rng_state(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])


def save_checkpoint(
    checkpoints: Path,
    step: int,
    write_model: Callable[[Path], None],
    tokenizer,
    trainer_state: dict[str, Any],
    state: dict[str, Any],
    keep: int,
    pipeline_state: dict[str, Any] | None = None,
    extra_files: dict[str, str] | None = None,
) -> Path:
    """`write_model(directory)` writes the model's files (PolicyTrainer.write_files);
    `extra_files` (name -> text) go beside them (an agent run's agent_settings.json)."""
    checkpoints.mkdir(parents=True, exist_ok=True)
    final = checkpoints / f"step-{step}"
    tmp = checkpoints / f".tmp-step-{step}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    write_model(tmp)
    tokenizer.save_pretrained(tmp)
    torch.save({**trainer_state, "rng": rng_state()}, tmp / "trainer_state.pt")
    if pipeline_state is not None:
        torch.save(pipeline_state, tmp / "pipeline_state.pt")
    (tmp / "state.json").write_text(json.dumps({**state, "step": step}, indent=2))
    for name, text in (extra_files or {}).items():
        (tmp / name).write_text(text)
    _fsync_tree(tmp)
    fault_point("checkpoint_write")
    shutil.rmtree(final, ignore_errors=True)
    os.replace(tmp, final)
    _fsync_dir(checkpoints)
    for old in list_checkpoints(checkpoints)[:-keep]:
        shutil.rmtree(checkpoints / f"step-{old}", ignore_errors=True)
    return final


def list_checkpoints(checkpoints: Path) -> list[int]:
    if not checkpoints.is_dir():
        return []
    steps = []
    for child in checkpoints.iterdir():
        match = _STEP_DIR.match(child.name)
        if match and (child / "state.json").is_file():
            steps.append(int(match.group(1)))
    return sorted(steps)


def latest_checkpoint(checkpoints: Path) -> Path | None:
    steps = list_checkpoints(checkpoints)
    return checkpoints / f"step-{steps[-1]}" if steps else None


def load_checkpoint_state(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    state = json.loads((path / "state.json").read_text())
    # tensors onto the CPU whichever device wrote them; the optimizer's load_state_dict moves its
    # state beside the parameters (a CUDA run resumes on a CPU machine, and the other way round)
    trainer_state = torch.load(path / "trainer_state.pt", map_location="cpu", weights_only=False)
    return state, trainer_state


def load_pipeline_state(path: Path) -> dict[str, Any] | None:
    """The newest of the checkpoint's pipeline states: pipeline_state.pt, or one saved later
    at the same step (save_pipeline_state)."""
    files = pipeline_state_files(path)
    return torch.load(files[-1], map_location="cpu", weights_only=False) if files else None


def pipeline_state_files(path: Path) -> list[Path]:
    """pipeline_state.pt and pipeline_state-K.pt, oldest first."""
    found = []
    for child in path.glob("pipeline_state*.pt"):
        match = _PIPELINE_STATE.match(child.name)
        if match:
            found.append((int(match.group(1) or 0), child))
    return [child for _, child in sorted(found)]


def save_pipeline_state(path: Path, pipeline_state: dict[str, Any]) -> Path:
    """A newer pipeline state for the existing checkpoint `path` (the trainer has not moved
    since it was written; the buffer and the rollouts in flight have): a new file,
    pipeline_state-K.pt, written whole beside the others. Files already published never change."""
    files = pipeline_state_files(path)
    generation = 1 + (int(_PIPELINE_STATE.match(files[-1].name).group(1) or 0) if files else 0)
    final = path / f"pipeline_state-{generation}.pt"
    tmp = path / f".{final.name}.tmp"
    torch.save(pipeline_state, tmp)
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, final)
    _fsync_dir(path)
    return final


def clean_partial_checkpoints(checkpoints: Path) -> None:
    if checkpoints.is_dir():
        for child in checkpoints.iterdir():
            if child.name.startswith(".tmp-"):
                shutil.rmtree(child, ignore_errors=True)


def _fsync_tree(root: Path) -> None:
    for path in sorted(root.rglob("*")):
        if path.is_file():
            with open(path, "rb") as f:
                os.fsync(f.fileno())
    _fsync_dir(root)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
