"""TensorBoard event files: every numeric value of a step's record as a scalar at its step."""

from __future__ import annotations

from pathlib import Path
from typing import Any


class TensorBoardSink:
    def __init__(self, directory: Path, resume_after: int | None = None) -> None:
        """`resume_after`: the last step a resumed run keeps; TensorBoard drops the events of
        later steps (purge_step), which the run redoes, so no step appears twice."""
        from torch.utils.tensorboard import SummaryWriter

        purge = None if resume_after is None else resume_after + 1
        self.writer = SummaryWriter(log_dir=str(directory), purge_step=purge)

    def write(self, record: dict[str, Any]) -> None:
        step = int(record["step"])
        for key, value in record.items():
            if key != "step" and isinstance(value, int | float) and not isinstance(value, bool):
                self.writer.add_scalar(key, value, step)
        self.writer.flush()  # a live run's curves in TensorBoard follow step by step

    def close(self) -> None:
        self.writer.close()
