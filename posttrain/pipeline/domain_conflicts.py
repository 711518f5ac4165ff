"""Gradient conflict between domains, measured during the RL loop: every `[monitor]
conflict_every` steps, the gradient of each domain's loss on the step's own samples of that
domain (after the step's update; nothing is applied) and the cosines between every pair of
domains, overall and per module group (posttrain.train.gradient_conflict). One JSON line per
measurement goes to RUN_DIR/conflicts.jsonl; the overall cosines and the most negative group go
into the step's record."""

from __future__ import annotations

import json
import os
from pathlib import Path

from posttrain.config import RunConfig
from posttrain.storage.atomic import write_text_atomic
from posttrain.train.gradient_conflict import conflict_summary, gradient_cosines

CONFLICTS = "conflicts.jsonl"


class DomainConflicts:
    def __init__(self, config: RunConfig, path: Path, trained_through: int = 0) -> None:
        self.every, self.path = config.monitor.conflict_every, path
        if path.is_file():  # a resumed run redoes the steps after its checkpoint: drop their rows
            kept = [line for line in path.read_text().splitlines() if _step(line) <= trained_through]
            write_text_atomic(path, "".join(line + "\n" for line in kept))

    def due(self, step: int) -> bool:
        return bool(self.every) and step % self.every == 0

    def measure(self, step: int, trainer, groups, advantages) -> dict:
        by_domain: dict[str, list] = {}
        for index, group in enumerate(groups):
            row = advantages[index].tolist()
            if any(row):  # a group with no advantage has no gradient to compare
                by_domain.setdefault(group.task.domain, []).extend(group.train_samples(row))
        if len(by_domain) < 2:
            return {"conflict/domains_measured": float(len(by_domain))}
        cosines = gradient_cosines({d: trainer.loss_gradient(samples) for d, samples in sorted(by_domain.items())})
        summary = conflict_summary(cosines)
        self._append({"step": step, "cosines": cosines, "summary": summary})
        record: dict = {"conflict/domains_measured": float(len(by_domain))}
        for pair, row in summary.items():
            record[f"conflict/{pair}/cosine"] = row["overall"]
            record[f"conflict/{pair}/min_group_cosine"] = row["most_negative_cosine"]
        return record

    def _append(self, row: dict) -> None:
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(row, sort_keys=True) + "\n")
            handle.flush()
            os.fsync(handle.fileno())


def _step(line: str) -> int:
    try:
        return int(json.loads(line)["step"])
    except (json.JSONDecodeError, KeyError, TypeError, ValueError):
        return 1 << 62  # a torn line from a kill: dropped
