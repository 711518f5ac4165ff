"""The run directory's layout, in one place."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RunDir:
    root: Path

    @property
    def config(self) -> Path:
        return self.root / "config.toml"

    @property
    def metrics(self) -> Path:
        return self.root / "metrics.jsonl"

    @property
    def trajectories(self) -> Path:
        return self.root / "trajectories.sqlite"

    @property
    def checkpoints(self) -> Path:
        return self.root / "checkpoints"

    @property
    def summary(self) -> Path:
        return self.root / "summary.json"

    @property
    def eval_before(self) -> Path:
        return self.root / "eval_before.json"

    @property
    def eval_after(self) -> Path:
        return self.root / "eval_after.json"
