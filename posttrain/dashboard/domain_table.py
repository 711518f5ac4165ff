"""The run page's table of domains: one row per domain, legible at a hundred of them.

Per domain: its kind (answer, terminal, scene: from the run's config.toml), the quality gate's
verdict when the run gated its answer domains (RUN_DIR/quality/answers/report.json; a dropped
domain is a row with no data), its pass rate now and the change since its first value, a short
series for a sparkline, and the training samples drawn from it (task ids per step x group size).

The pass rate is the held-out monitor's accuracy where the monitor checked the domain (the same
items each time), else the training pass rate of its recent groups (`mixture/<d>/pass_rate`),
else its mean reward per step; `measure` says which.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from posttrain.dashboard.overviews import read_config, read_json

SPARK_POINTS = 48  # a sparkline needs no more; longer series are thinned evenly
MEASURES = (("held-out", "monitor/{}/accuracy"), ("training", "mixture/{}/pass_rate"), ("reward", "reward/{}"))
_TERMINAL_PREFIXES = ("harbor:", "terminal-gen:")


def domain_kind(domain: dict[str, Any]) -> str:
    source = str(domain.get("source", ""))
    if source.startswith("scene:"):
        return "scene"
    if domain.get("kind") == "terminal" or source.startswith(_TERMINAL_PREFIXES):
        return "terminal"
    return "answer"


def gate_verdicts(run_dir: Path) -> dict[str, dict[str, Any]]:
    """Domain -> {verdict, reason, items_quarantined} from the run's answer gate, if it ran."""
    report, _ = read_json(run_dir / "quality" / "answers" / "report.json")
    tasks = report.get("tasks", []) if isinstance(report, dict) else []
    return {
        t["id"]: {"verdict": t.get("verdict"), "reason": t.get("reason"), "quarantined": t.get("items_quarantined")}
        for t in tasks
        if isinstance(t, dict) and t.get("kind") == "domain" and "id" in t
    }


def _series(records: list[dict[str, Any]], key: str) -> list[tuple[float, float]]:
    """(step, value) wherever a record has `key`; a background monitor check at the step whose
    weights it evaluated."""
    points = []
    for record in records:
        value = record.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and value == value:
            step = record.get("monitor/step", record["step"]) if key.startswith("monitor/") else record["step"]
            points.append((float(step), float(value)))
    return sorted(points)


def _thinned(points: list[tuple[float, float]]) -> list[list[float]]:
    if len(points) <= SPARK_POINTS:
        return [list(p) for p in points]
    last = len(points) - 1
    return [list(points[round(i * last / (SPARK_POINTS - 1))]) for i in range(SPARK_POINTS)]


def _samples(records: list[dict[str, Any]], group_size: int) -> Counter:
    counts: Counter = Counter()
    for record in records:
        for task_id in record.get("task_ids") or []:
            counts[str(task_id).rsplit("/", 1)[0]] += group_size
    return counts


def domain_rows(run_dir: Path, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The table's rows, in the config's order (the page sorts them)."""
    config, _ = read_config(run_dir / "config.toml")
    gate = gate_verdicts(run_dir)
    group_size = int((config.get("rollout") or {}).get("group_size", 1))
    samples = _samples(records, group_size)
    names = [d.get("name") for d in config.get("domains") or [] if d.get("name")]
    kinds = {d.get("name"): domain_kind(d) for d in config.get("domains") or []}
    names += sorted(set(gate) - set(names))
    rows = []
    for name in names:
        measure, points = None, []
        for label, pattern in MEASURES:
            points = _series(records, pattern.format(name))
            if points:
                measure = label
                break
        verdict = gate.get(name, {})
        rows.append(
            {
                "domain": name,
                "kind": kinds.get(name, "answer"),
                "gate": verdict.get("verdict"),
                "gate_reason": verdict.get("reason"),
                "measure": measure,
                "now": points[-1][1] if points else None,
                "change": points[-1][1] - points[0][1] if len(points) > 1 else None,
                "spark": _thinned(points),
                "samples": samples.get(name, 0),
            }
        )
    return rows
