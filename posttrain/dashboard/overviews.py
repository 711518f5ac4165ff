"""What the runs list and a directory's header show: status, config, progress, results.

Status: `finished` once summary.json exists (an inspection writes its report.json only when
it is done: it is always finished); `live` while the directory was written to in the
last LIVE_WINDOW_S seconds; else `crashed` (stopped without a summary: a crash, a kill or
Ctrl-C; `posttrain train --resume` continues it)."""

from __future__ import annotations

import json
import time
import tomllib
from pathlib import Path
from typing import Any

from posttrain.dashboard.directories import EVAL, INSPECT, RUN, Directory
from posttrain.observe.run_story import comparison

LIVE_WINDOW_S = 120.0
_WATCHED = ("metrics.jsonl", "trajectories.sqlite", "trajectories.sqlite-wal", "results.jsonl", "config.toml")


def status(path: Path, kind: str = RUN, now: float | None = None) -> str:
    if kind == INSPECT or (path / "summary.json").is_file():
        return "finished"
    times = [(path / name).stat().st_mtime for name in _WATCHED if (path / name).exists()]
    if times and (now or time.time()) - max(times) < LIVE_WINDOW_S:
        return "live"
    return "crashed"


def read_json(path: Path) -> tuple[Any, str | None]:
    """(the document, None) or (None, the problem in one line); a missing file is (None, None)."""
    if not path.is_file():
        return None, None
    try:
        return json.loads(path.read_text()), None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return None, f"{path.name}: not JSON ({exc.msg} at line {exc.lineno})"


def read_config(path: Path) -> tuple[dict[str, Any], str | None]:
    if not path.is_file():
        return {}, None
    try:
        return tomllib.loads(path.read_text()), None
    except tomllib.TOMLDecodeError as exc:
        return {}, f"{path.name}: not TOML ({exc})"


def overview(directory: Directory, last_step: int | None = None) -> dict[str, Any]:
    base = {
        "index": directory.index,
        "kind": directory.kind,
        "name": directory.name,
        "path": str(directory.path),
        "status": status(directory.path, directory.kind),
    }
    builder = {RUN: _run, EVAL: _eval, INSPECT: _inspect}[directory.kind]
    return {**base, **builder(directory.path, last_step)}


def _run(path: Path, last_step: int | None) -> dict[str, Any]:
    config, config_problem = read_config(path / "config.toml")
    summary, summary_problem = read_json(path / "summary.json")
    summary = summary if isinstance(summary, dict) else {}
    return {
        "model": (config.get("model") or {}).get("name"),
        "mode": config.get("mode"),
        "domains": [d.get("name") for d in config.get("domains") or []],
        "algorithm": config.get("algorithm") or {},
        "steps_planned": (config.get("train") or {}).get("steps"),
        "step": last_step,
        "heldout": {
            "before": summary.get("eval_before"),
            "after": summary.get("eval_after"),
            "delta": summary.get("delta"),
            "delta_ci95": summary.get("delta_ci95"),
            "per_domain_delta": summary.get("per_domain_delta"),
        },
        # held-out pass@1 by stage: base -> SFT -> RL for a warm-started run (summary.json's
        # before/after are SFT -> RL there, which would hide the base model's score)
        "comparison": comparison(summary, path),
        "seesaw_alarms": summary.get("seesaw_alarms") or [],
        "config": config,
        "problems": [p for p in (config_problem, summary_problem) if p],
    }


def _eval(path: Path, last_step: int | None) -> dict[str, Any]:
    settings, settings_problem = read_json(path / "eval.json")
    summary, summary_problem = read_json(path / "summary.json")
    summary = summary if isinstance(summary, dict) else {}
    return {
        "settings": settings or {},
        "summary": {k: v for k, v in summary.items() if k != "tasks"},
        "problems": [p for p in (settings_problem, summary_problem) if p],
    }


def _inspect(path: Path, last_step: int | None) -> dict[str, Any]:
    report, problem = read_json(path / "report.json")
    report = report if isinstance(report, dict) else {}
    return {"summary": report.get("summary") or {}, "problems": [problem] if problem else []}
