"""Paged, filtered reads of trajectories.sqlite that stay fast on a store of any size.

The store is opened read-only (a live run keeps writing it; the dashboard never locks it
for long and never changes it). Pages use keyset pagination (`id > after`), so page 1,000
costs what page 1 costs, and no query counts or loads the whole store: a page asks for one row
more than it shows to know whether another page follows. The list selects only small
columns; token ids and logprobs are read for one sample at a time."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from posttrain.observe.trajectory_store import open_read_only, stored_sample

PAGE_SIZE_MAX = 200

_LIST_COLUMNS = (
    "id, step, phase, task_id, domain, sample_index, policy_version, reward, passed, advantage, finish_reason, "
    "json_array_length(completion_token_ids) AS length, substr(text, 1, 160) AS preview"
)


@dataclass(frozen=True)
class SampleFilter:
    step: int | None = None
    domain: str | None = None
    task: str | None = None  # a substring of the task id
    min_reward: float | None = None
    max_reward: float | None = None
    passed: bool | None = None
    min_length: int | None = None
    max_length: int | None = None

    def where(self) -> tuple[str, list[Any]]:
        clauses, args = [], []
        for clause, value in (
            ("step = ?", self.step),
            ("domain = ?", self.domain),
            ("instr(task_id, ?) > 0", self.task),
            ("reward >= ?", self.min_reward),
            ("reward <= ?", self.max_reward),
            ("passed = ?", None if self.passed is None else int(self.passed)),
            ("json_array_length(completion_token_ids) >= ?", self.min_length),
            ("json_array_length(completion_token_ids) <= ?", self.max_length),
        ):
            if value is not None and value != "":
                clauses.append(clause)
                args.append(value)
        return " AND ".join(clauses) or "1", args


class TrajectoryQueries:
    def __init__(self, path: Path) -> None:
        self.path = path

    def exists(self) -> bool:
        return self.path.is_file()

    def _connect(self) -> sqlite3.Connection:
        return open_read_only(self.path)

    def steps(self) -> list[dict[str, int]]:
        """Each step with its number of samples (read from the step index alone)."""
        if not self.exists():
            return []
        with self._connect() as db:
            rows = db.execute("SELECT step, count(*) AS samples FROM trajectories GROUP BY step ORDER BY step")
            return [{"step": int(r["step"]), "samples": int(r["samples"])} for r in rows]

    def page(self, sample_filter: SampleFilter, after: int = 0, size: int = 50) -> dict[str, Any]:
        """Up to `size` samples with id > after, in id order; `next_after` is the cursor of the
        next page, None on the last."""
        size = max(1, min(size, PAGE_SIZE_MAX))
        if not self.exists():
            return {"samples": [], "next_after": None}
        where, args = sample_filter.where()
        with self._connect() as db:
            rows = db.execute(
                f"SELECT {_LIST_COLUMNS} FROM trajectories WHERE id > ? AND {where} ORDER BY id LIMIT ?",
                [after, *args, size + 1],
            ).fetchall()
        samples = [_list_row(r) for r in rows[:size]]
        return {"samples": samples, "next_after": samples[-1]["id"] if len(rows) > size else None}

    def sample(self, sample_id: int) -> dict[str, Any] | None:
        if not self.exists():
            return None
        with self._connect() as db:
            row = db.execute("SELECT * FROM trajectories WHERE id = ?", (sample_id,)).fetchone()
        return None if row is None else stored_sample(row)


def _list_row(row: sqlite3.Row) -> dict[str, Any]:
    item = dict(row)
    item["passed"] = bool(item["passed"])
    return item
