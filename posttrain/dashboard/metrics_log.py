"""metrics.jsonl read incrementally: a poll reads only the bytes appended since the last one.

A line that is not JSON is reported by its line number and skipped; the rest is served. The
last line while it has no newline yet is a record being written, not a damaged one: it is
read on a later poll. A file that shrank (a resumed run truncates steps after its checkpoint)
is read again from the start.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any


class MetricsLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.records: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self._offset = 0
        self._lines = 0
        self._lock = threading.Lock()

    def refresh(self) -> list[dict[str, Any]]:
        """The records read so far, after reading what was appended."""
        with self._lock:
            size = self.path.stat().st_size if self.path.is_file() else 0
            if size < self._offset:
                self.records, self.problems, self._offset, self._lines = [], [], 0, 0
            if size > self._offset:
                with open(self.path, "rb") as handle:
                    handle.seek(self._offset)
                    chunk = handle.read(size - self._offset)
                complete = chunk[: chunk.rfind(b"\n") + 1]
                self._offset += len(complete)
                for line in complete.splitlines():
                    self._lines += 1
                    self._parse(line)
            return self.records

    def _parse(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            record = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            self.problems.append(f"{self.path.name}:{self._lines}: not JSON; line skipped")
            return
        if not isinstance(record, dict) or not isinstance(record.get("step"), int | float):
            self.problems.append(f"{self.path.name}:{self._lines}: not a step record; line skipped")
            return
        self.records.append(record)

    def mtime(self) -> float | None:
        return self.path.stat().st_mtime if self.path.is_file() else None
