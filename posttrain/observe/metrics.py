"""metrics.jsonl: one JSON object per line, flushed as it is written."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from posttrain.storage.atomic import write_text_atomic


class JsonlMetricsSink:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = open(path, "a", encoding="utf-8")

    def write(self, record: dict[str, Any]) -> None:
        self._file.write(json.dumps(record, sort_keys=True) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()


class MetricSinks:
    """metrics.jsonl and the sinks of `[logging] report_to`, written together."""

    def __init__(
        self, path: Path, report_to: list[str] = (), resume_after: int | None = None, logging=None, run_config=None
    ) -> None:
        """`logging`: the [logging] settings (wandb's project and mode); `run_config`: the
        resolved run config as a dict, W&B's run config."""
        self.sinks: list[Any] = [JsonlMetricsSink(path)]
        if "tensorboard" in report_to:
            from posttrain.observe.tensorboard_sink import TensorBoardSink

            self.sinks.append(TensorBoardSink(path.parent / "tensorboard", resume_after))
        if "wandb" in report_to:
            from posttrain.observe.wandb_sink import WandbSink

            project, mode = (logging.wandb_project, logging.wandb_mode) if logging else ("posttrain", "offline")
            name = path.parent.resolve().name
            self.sinks.append(WandbSink(path.parent / "wandb", name, run_config or {}, project, mode))

    def write(self, record: dict[str, Any]) -> None:
        for sink in self.sinks:
            sink.write(record)

    def close(self) -> None:
        for sink in self.sinks:
            sink.close()


def read_metrics(path: Path) -> list[dict[str, Any]]:
    """Every complete record; a torn last line (a kill mid-write) is ignored."""
    records = []
    if not path.exists():
        return records
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records


def truncate_metrics_after(path: Path, step: int) -> None:
    """Keep the records of steps <= `step` (those a checkpoint covers); a resumed run redoes
    the rest, so no step appears twice."""
    kept = [r for r in read_metrics(path) if r.get("step", -1) <= step]
    write_text_atomic(path, "".join(json.dumps(r, sort_keys=True) + "\n" for r in kept))
