"""Steering a running job and watching it, through two files in its run directory:

control.json    written by `posttrain pipeline set`: domain weights, the mixture policy and the
                rollout worker count; the run applies a change at its next step (a finished
                run reads nothing: `set` refuses it, `status` says it is finished)
dispatch.json  written by the run four times a second: workers (pid, job), queue, buffer,
                policy version, retry and failure counters (`posttrain pipeline status`)
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path

from posttrain.config import MIXTURE_POLICIES
from posttrain.errors import PosttrainError
from posttrain.pipeline.run_dir import RunDir
from posttrain.storage.atomic import write_json_atomic

CONTROL = "control.json"
STATUS = "dispatch.json"


def write_control(
    run_dir: Path,
    domains: list[str],
    weights: dict[str, float] | None = None,
    workers: int | None = None,
    policy: str | None = None,
) -> dict:
    """Merge a change into RUN_DIR/control.json; `domains` are the run's, for validation."""
    unknown = sorted(set(weights or {}) - set(domains))
    if unknown:
        raise PosttrainError(
            f"{run_dir / 'config.toml'}: no domain named {', '.join(unknown)} (domains: {', '.join(domains)})"
        )
    bad = {d: w for d, w in (weights or {}).items() if not w > 0}
    if bad:
        raise PosttrainError(f"weights must be > 0: {bad}")
    if workers is not None and workers < 1:
        raise PosttrainError(f"--workers must be >= 1, got {workers}")
    if policy is not None and policy not in MIXTURE_POLICIES:
        raise PosttrainError(f"--policy {policy!r}: choose one of {', '.join(MIXTURE_POLICIES)}")
    path = run_dir / CONTROL
    current = read_control(run_dir) or {}
    current.setdefault("weights", {}).update(weights or {})
    if workers is not None:
        current["workers"] = workers
    if policy is not None:
        current["policy"] = policy
    current["revision"] = current.get("revision", 0) + 1
    write_json_atomic(path, current)
    return current


def read_control(run_dir: Path) -> dict | None:
    path = run_dir / CONTROL
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise PosttrainError(f"{path}: not valid JSON: {exc}") from None


def run_finished(run_dir: Path) -> bool:
    """Whether the run in `run_dir` has finished: it wrote summary.json after its dispatcher's
    last status (a run writes summary.json once its rollouts are closed; a resumed run writes
    dispatch.json again, newer than the old summary)."""
    summary, status = RunDir(run_dir).summary, run_dir / STATUS
    if not summary.is_file():
        return False
    return not status.is_file() or summary.stat().st_mtime >= status.stat().st_mtime


class ControlWatcher:
    """Returns control.json's content when its revision changed since the last poll."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.revision: int | None = None

    def poll(self) -> dict | None:
        control = read_control(self.run_dir)
        if control is None or control.get("revision") == self.revision:
            return None
        self.revision = control.get("revision")
        return control


class StatusWriter:
    """Writes `snapshot()` to RUN_DIR/dispatch.json every `period_s` from a daemon thread, from
    `start(snapshot)` on."""

    def __init__(self, run_dir: Path, period_s: float = 0.25) -> None:
        self.path = run_dir / STATUS
        self.snapshot: Callable[[], dict] | None = None
        self.period_s = period_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="status-writer", daemon=True)

    def start(self, snapshot: Callable[[], dict]) -> None:
        self.snapshot = snapshot
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.period_s):
            self.write()

    def write(self) -> None:
        try:
            data = {**self.snapshot(), "pid": os.getpid()}
            write_json_atomic(self.path, data)
        except Exception:  # noqa: BLE001 - a status file must never take the run down
            pass

    def close(self) -> None:
        if self.snapshot is None:
            return  # never started
        self._stop.set()
        self._thread.join(timeout=5)
        self.write()
