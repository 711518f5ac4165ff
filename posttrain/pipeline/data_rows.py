"""Users' data files read row by row: JSONL (one JSON object a line), parquet, or a table a
`datasets` save_to_disk wrote (a directory). Each row is checked by the caller's
`check(object) -> (row, problem)`; bad rows are collected as `FILE:ROW: problem` lines (ROW:
the line of a JSONL file, counting from 1; the row of a table, counting from 1)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

from posttrain.errors import PosttrainError


def read_data_rows(
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
        for number, data in _records(path, what):
            row, problem = _checked(data, check, fields)
            if problem:
                problems.append(f"{path}:{number}: {problem}")
            else:
                rows.append((f"{path}:{number}", row))
    if strict and problems:
        raise PosttrainError(f"bad {what} rows (--strict):\n" + "\n".join(problems))
    return rows, problems


def _records(path: Path, what: str) -> Iterator[tuple[int, object]]:
    """(row number, the row: a parsed object, or the JSONDecodeError of a line that is not JSON)."""
    if path.is_dir() or path.suffix == ".parquet":
        yield from enumerate((_without_nulls(r) for r in _table(path, what)), start=1)
        return
    if not path.is_file():
        raise PosttrainError(f"{path}: {what} file not found")
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if line.strip():
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as exc:
                yield number, exc


def _table(path: Path, what: str) -> list[dict]:
    if path.suffix == ".parquet":
        if not path.is_file():
            raise PosttrainError(f"{path}: {what} file not found")
        import pyarrow.parquet as pq

        return pq.read_table(path).to_pylist()
    import datasets

    try:
        table = datasets.load_from_disk(str(path))
    except FileNotFoundError as exc:
        raise PosttrainError(f"{path}: not a table saved by datasets' save_to_disk ({exc})") from None
    if isinstance(table, datasets.DatasetDict):
        raise PosttrainError(f"{path}: a DatasetDict of {', '.join(table)}; give one split's directory")
    return table.to_list()


def _without_nulls(value):
    """A table row without its null fields: a table gives every row every column (a user
    message gets `tool_calls: null`), which chat templates would take for a value."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _checked(data, check, fields: str) -> tuple[object, str | None]:
    if isinstance(data, json.JSONDecodeError):
        return None, f"not valid JSON ({data.msg})"
    if not isinstance(data, dict):
        return None, f"not a JSON object with {fields}"
    return check(data)
