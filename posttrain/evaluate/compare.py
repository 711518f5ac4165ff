"""Two eval runs side by side: per-task pass rates and the overall difference with a paired
bootstrap confidence interval over the tasks both ran."""

from __future__ import annotations

import json
from pathlib import Path

from posttrain.errors import PosttrainError
from posttrain.evaluate.statistics import paired_bootstrap_ci


def _summary(run: Path) -> dict:
    path = run / "summary.json"
    if not path.is_file():
        raise PosttrainError(f"{path}: missing; is {run} an eval run directory?")
    return json.loads(path.read_text())


def compare_runs(run_a: Path, run_b: Path, samples: int = 2000, seed: int = 0) -> dict:
    a, b = _summary(run_a), _summary(run_b)
    common = sorted(set(a["tasks"]) & set(b["tasks"]))
    if not common:
        raise PosttrainError(f"{run_a} and {run_b} share no task")

    def rate(task: dict) -> float:
        return task["passed"] / task["attempts"]

    before = [rate(a["tasks"][t]) for t in common]
    after = [rate(b["tasks"][t]) for t in common]
    delta, low, high = paired_bootstrap_ci(before, after, samples=samples, seed=seed)
    return {
        "a": str(run_a),
        "b": str(run_b),
        "tasks_compared": len(common),
        "only_in_a": sorted(set(a["tasks"]) - set(b["tasks"])),
        "only_in_b": sorted(set(b["tasks"]) - set(a["tasks"])),
        "pass_rate": {"a": sum(before) / len(common), "b": sum(after) / len(common)},
        "difference": delta,
        "difference_ci95": [low, high],
        "tasks": {t: {"a": x, "b": y, "difference": y - x} for t, x, y in zip(common, before, after)},
    }
