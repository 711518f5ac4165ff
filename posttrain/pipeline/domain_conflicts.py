"""Gradient conflict between domains, measured during the RL loop: every `[monitor]
conflict_every` steps, the gradient of each domain's loss on the step's own samples of that
domain (after the step's update; nothing is applied) and the cosines between every pair of
domains, overall and per module group (posttrain.train.gradient_conflict), from count sketches
of each domain's gradient taken as soon as it is computed (posttrain.train.gradient_sketch;
`[monitor] conflict_sketch = 0` keeps full copies and exact cosines). One JSON line per
measurement goes to RUN_DIR/conflicts.jsonl, with the most conflicting pairs; the step's record
gets the overall cosine and most negative group of each pair up to PAIRS_IN_RECORD domains, and
the lowest cosine always."""

from __future__ import annotations

import json
import os
from pathlib import Path

from posttrain.config import RunConfig
from posttrain.storage.atomic import write_text_atomic
from posttrain.train.gradient_conflict import conflict_summary, gradient_cosines
from posttrain.train.gradient_sketch import most_conflicting_pairs, sketch_cosines, sketch_gradient

CONFLICTS = "conflicts.jsonl"
PAIRS_IN_RECORD = 8  # domains up to which every pair gets keys of its own in metrics.jsonl


class DomainConflicts:
    def __init__(self, config: RunConfig, path: Path, trained_through: int = 0) -> None:
        self.every, self.path = config.monitor.conflict_every, path
        self.sketch_width = config.monitor.conflict_sketch
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
        cosines = self._cosines(trainer, by_domain)
        summary = conflict_summary(cosines)
        worst = most_conflicting_pairs(cosines)
        self._append({"step": step, "cosines": cosines, "summary": summary, "most_conflicting": worst})
        record: dict = {"conflict/domains_measured": float(len(by_domain)), "conflict/min_cosine": worst[0]["cosine"]}
        if len(by_domain) <= PAIRS_IN_RECORD:
            for pair, row in summary.items():
                record[f"conflict/{pair}/cosine"] = row["overall"]
                record[f"conflict/{pair}/min_group_cosine"] = row["most_negative_cosine"]
        return record

    def _cosines(self, trainer, by_domain: dict[str, list]) -> dict:
        domains = sorted(by_domain)
        if not self.sketch_width:
            return gradient_cosines({d: trainer.loss_gradient(by_domain[d]) for d in domains})
        # one full gradient at a time: each is sketched and let go before the next is computed
        width = self.sketch_width
        return sketch_cosines({d: sketch_gradient(trainer.loss_gradient(by_domain[d]), width) for d in domains})

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
