"""Users' JSONL data files read row by row: each line parsed as a JSON object and checked by
the caller's `check(object) -> (row, problem)`, bad rows collected as `FILE:ROW: problem`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from posttrain.errors import PosttrainError


def read_jsonl_rows(
    paths: list[Path],
    check: Callable[[dict], tuple[object, str | None]],
    what: str,
    fields: str,
    strict: bool = False,
) -> tuple[list[tuple[str, object]], list[str]]:
    """(FILE:ROW, row) for every good row, and one line per bad row; blank lines are skipped.
    `what` names the data in errors ("chat data"), `fields` what an object holds ("messages");
    strict: any bad row is an error listing all."""
    rows, problems = [], []
    for path in paths:
        if not path.is_file():
            raise PosttrainError(f"{path}: {what} file not found")
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if line.strip():
                row, problem = _parsed(line, check, fields)
                if problem:
                    problems.append(f"{path}:{number}: {problem}")
                else:
                    rows.append((f"{path}:{number}", row))
    if strict and problems:
        raise PosttrainError(f"bad {what} rows (--strict):\n" + "\n".join(problems))
    return rows, problems


def _parsed(line: str, check, fields: str) -> tuple[object, str | None]:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON ({exc.msg})"
    if not isinstance(data, dict):
        return None, f"not a JSON object with {fields}"
    return check(data)
