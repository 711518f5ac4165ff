"""trajectories.sqlite -> JSONL or Parquet, for analysis elsewhere (pandas, DuckDB, Spark).

One record per sample with the store's columns: token ids and logprobs as lists, `details` as
an object (JSONL) or its JSON text (Parquet, whose columns need one type). Read in batches,
written to a temporary file and renamed: a store of any size, and no half-written export."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from posttrain.errors import PosttrainError
from posttrain.observe.trajectory_store import open_read_only, stored_sample

FORMATS = ("jsonl", "parquet")
BATCH = 2000


class ExportError(PosttrainError):
    pass


def stored_batches(store: Path, batch: int = BATCH) -> Iterator[list[dict[str, Any]]]:
    db = open_read_only(store)
    try:
        cursor = db.execute("SELECT * FROM trajectories ORDER BY id")
        while rows := cursor.fetchmany(batch):
            yield [stored_sample(r) for r in rows]
    finally:
        db.close()


def export_trajectories(run: Path, out: Path, fmt: str) -> int:
    """Write every sample of RUN/trajectories.sqlite to `out`; returns how many."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    store = run / "trajectories.sqlite"
    if not store.is_file():
        raise ExportError(f"{run}: no trajectories.sqlite (not a training run directory)")
    partial = out.with_name(out.name + ".partial")
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        count = (_write_jsonl if fmt == "jsonl" else _write_parquet)(stored_batches(store), partial)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, out)
    return count


def _write_jsonl(batches: Iterator[list[dict[str, Any]]], path: Path) -> int:
    count = 0
    with open(path, "w", encoding="utf-8") as handle:
        for batch in batches:
            handle.writelines(json.dumps(sample) + "\n" for sample in batch)
            count += len(batch)
    return count


def _write_parquet(batches: Iterator[list[dict[str, Any]]], path: Path) -> int:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ExportError("--format parquet needs pyarrow: pip install pyarrow") from None
    schema = pa.schema(
        [
            ("id", pa.int64()),
            ("step", pa.int64()),
            ("phase", pa.string()),
            ("task_id", pa.string()),
            ("domain", pa.string()),
            ("sample_index", pa.int64()),
            ("policy_version", pa.int64()),
            ("prompt_token_ids", pa.list_(pa.int64())),
            ("completion_token_ids", pa.list_(pa.int64())),
            ("logprobs", pa.list_(pa.float64())),
            ("text", pa.string()),
            ("finish_reason", pa.string()),
            ("reward", pa.float64()),
            ("passed", pa.bool_()),
            ("details", pa.string()),
            ("advantage", pa.float64()),
        ]
    )
    count = 0
    with pq.ParquetWriter(path, schema) as writer:
        for batch in batches:
            rows = [{**sample, "details": json.dumps(sample["details"])} for sample in batch]
            writer.write_table(pa.Table.from_pylist(rows, schema=schema))
            count += len(batch)
    return count
