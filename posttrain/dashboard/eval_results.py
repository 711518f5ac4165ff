"""An eval run directory's rows (results.jsonl) and the trajectory JSON behind each attempt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from posttrain.evaluate.metrics import outcome


def result_rows(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """Every row of results.jsonl with its one `outcome` label (passed, or the failure category),
    and one problem line per line that is not JSON (the last line while it is still being
    written is not one)."""
    results = path / "results.jsonl"
    if not results.is_file():
        return [], []
    rows, problems = [], []
    data = results.read_bytes()
    complete = data[: data.rfind(b"\n") + 1]
    for number, line in enumerate(complete.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            problems.append(f"results.jsonl:{number}: not JSON; line skipped")
            continue
        rows.append({**row, "outcome": outcome(row)})
    return rows, problems


def trajectory_file(path: Path, name: str) -> Path | None:
    """The trajectory a row names (`trajectories/<task>__<attempt>.json`), only inside the
    run's trajectories/ folder."""
    folder = (path / "trajectories").resolve()
    target = (path / name).resolve()
    if target.parent != folder or target.suffix != ".json" or not target.is_file():
        return None
    return target
