"""trajectories.sqlite: every sampled completion, token-in-token-out, with its reward."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS trajectories (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    step INTEGER NOT NULL,
    phase TEXT NOT NULL,
    task_id TEXT NOT NULL,
    domain TEXT NOT NULL,
    sample_index INTEGER NOT NULL,
    policy_version INTEGER NOT NULL,
    prompt_token_ids TEXT NOT NULL,
    completion_token_ids TEXT NOT NULL,
    logprobs TEXT NOT NULL,
    text TEXT NOT NULL,
    finish_reason TEXT NOT NULL,
    reward REAL NOT NULL,
    passed INTEGER NOT NULL,
    details TEXT NOT NULL,
    advantage REAL
);
CREATE INDEX IF NOT EXISTS trajectories_step ON trajectories(step);
"""


def open_read_only(path: Path) -> sqlite3.Connection:
    """A connection that reads the store while a run may still write it, and never changes
    it; rows come as sqlite3.Row (by column name)."""
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5)
    db.row_factory = sqlite3.Row
    return db


# the columns that hold JSON text, parsed when a row is read back
JSON_COLUMNS = ("prompt_token_ids", "completion_token_ids", "logprobs", "details")


def stored_sample(row: sqlite3.Row) -> dict[str, Any]:
    """A row as the sample it records: JSON columns parsed, `passed` a bool."""
    sample = dict(row)
    for key in JSON_COLUMNS:
        sample[key] = json.loads(sample[key])
    sample["passed"] = bool(sample["passed"])
    return sample


class TrajectoryStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.db = sqlite3.connect(path)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.executescript(_SCHEMA)

    def add_groups(self, step: int, phase: str, rows: Iterable[dict[str, Any]]) -> None:
        """Rows of one step land in one transaction: all or none."""
        with self.db:
            self.db.executemany(
                "INSERT INTO trajectories (step, phase, task_id, domain, sample_index, policy_version, "
                "prompt_token_ids, completion_token_ids, logprobs, text, finish_reason, reward, passed, details, "
                "advantage) "
                "VALUES (:step, :phase, :task_id, :domain, :sample_index, :policy_version, :prompt_token_ids, "
                ":completion_token_ids, :logprobs, :text, :finish_reason, :reward, :passed, :details, :advantage)",
                [
                    {
                        **row,
                        "step": step,
                        "phase": phase,
                        "prompt_token_ids": json.dumps(row["prompt_token_ids"]),
                        "completion_token_ids": json.dumps(row["completion_token_ids"]),
                        "logprobs": json.dumps(row["logprobs"]),
                        "details": json.dumps(row.get("details", {}), default=str),
                        "passed": int(row["passed"]),
                        "advantage": row.get("advantage"),
                    }
                    for row in rows
                ],
            )

    def delete_after(self, step: int) -> None:
        with self.db:
            self.db.execute("DELETE FROM trajectories WHERE step > ?", (step,))

    def task_ids(self, phase: str = "train") -> list[tuple[int, str]]:
        cursor = self.db.execute(
            "SELECT DISTINCT step, task_id FROM trajectories WHERE phase = ? ORDER BY step, task_id", (phase,)
        )
        return [(int(s), str(t)) for s, t in cursor]

    def close(self) -> None:
        self.db.close()
