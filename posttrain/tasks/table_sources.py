"""Tasks from tables: verl's parquet files and Hugging Face datasets.

    parquet:PATH       verl's layout: `prompt` (chat messages), `reward_model.ground_truth`,
                       `data_source` (and `extra_info`, kept for reward functions)
    hf-dataset:PATH    a dataset saved with `datasets` (`save_to_disk`: a folder; a DatasetDict's
                       `split`), or a local data file (.parquet, .jsonl, .json, .csv)

Which column holds what is set by the domain's column keys (`prompt_column`, `answer_column`,
`data_source_column`); an answer column may be a dotted path into a struct column
(`reward_model.ground_truth`). A prompt is text (put through `prompt_template`) or chat
messages (a list of {role, content}). The whole table is checked when the source is built:
every bad row is reported with the file, the row (counted from 0, as the dataset indexes it)
and the column, before a run writes anything.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from posttrain.errors import TaskSourceError
from posttrain.tasks.records import Task

MAX_REPORTED_ROWS = 10
DATA_FILE_BUILDERS = {".parquet": "parquet", ".jsonl": "json", ".json": "json", ".csv": "csv"}


def read_parquet_rows(path: Path) -> list[dict]:
    import pyarrow
    import pyarrow.parquet

    if not path.is_file():
        raise TaskSourceError(f"{path}: no such parquet file")
    try:
        return pyarrow.parquet.read_table(path).to_pylist()
    except (pyarrow.ArrowException, OSError) as exc:
        raise TaskSourceError(f"{path}: not a readable parquet file ({exc})") from exc


def read_dataset_rows(path: Path, split: str) -> list[dict]:
    """A `save_to_disk` folder (a Dataset, or a DatasetDict's `split`) or a local data file."""
    import datasets

    if path.is_dir():
        try:
            loaded = datasets.load_from_disk(str(path))
        except (FileNotFoundError, ValueError) as exc:
            raise TaskSourceError(f"{path}: not a dataset saved with save_to_disk ({exc})".splitlines()[0]) from exc
        if isinstance(loaded, datasets.DatasetDict):
            if split not in loaded:
                raise TaskSourceError(f"{path}: no split {split!r}; the dataset has {sorted(loaded)} (set split = ...)")
            loaded = loaded[split]
        return loaded.to_list()
    builder = DATA_FILE_BUILDERS.get(path.suffix)
    if not path.is_file():
        raise TaskSourceError(f"{path}: no such dataset folder or data file")
    if builder is None:
        known = sorted(DATA_FILE_BUILDERS)
        raise TaskSourceError(f"{path}: unknown data file type {path.suffix!r}; use one of {known}")
    try:
        return datasets.load_dataset(builder, data_files=str(path), split="train").to_list()
    except Exception as exc:  # datasets wraps parser errors in several types
        raise TaskSourceError(f"{path}: cannot read it as {builder} ({type(exc).__name__})") from exc


def column_value(row: dict, column: str) -> Any:
    """row[column], or a dotted path into struct columns; KeyError when absent."""
    if column in row:
        return row[column]
    value: Any = row
    for part in column.split("."):
        if not isinstance(value, dict) or part not in value:
            raise KeyError(column)
        value = value[part]
    return value


def instruction_of(value: Any, template: str) -> str | list[dict[str, str]]:
    """A prompt cell as a task instruction; ValueError saying what is wrong with it."""
    if isinstance(value, str):
        if not value.strip():
            raise ValueError("empty prompt")
        return template.format(question=value)
    if isinstance(value, list) and value:
        messages = []
        for message in value:
            if not isinstance(message, dict) or not isinstance(message.get("content"), str) or not message.get("role"):
                raise ValueError(f"expected chat messages (a list of {{role, content}}), got an item {message!r:.80}")
            messages.append({"role": str(message["role"]), "content": message["content"]})
        return messages
    raise ValueError(f"expected text or chat messages (a list of {{role, content}}), got {value!r:.80}")


class TableSource:
    """Answer tasks, one per row of a table read by `read_parquet_rows` or `read_dataset_rows`."""

    def __init__(
        self,
        domain: str,
        path: Path,
        rows: list[dict],
        prompt_column: str,
        answer_column: str,
        data_source_column: str,
        data_sources: list[str],
        prompt_template: str,
        answer_extraction: str | None,
    ) -> None:
        self.domain = domain
        self.path = path
        if not rows:
            raise TaskSourceError(f"{path}: no rows")
        columns = set(rows[0])
        for key, column in (("prompt_column", prompt_column), ("answer_column", answer_column)):
            if column not in columns and column.split(".")[0] not in columns:
                raise TaskSourceError(f"{path}: no column {column!r} ({key}); the columns are {sorted(columns)}")
        self.tasks: list[Task] = []
        errors: list[str] = []
        for index, row in enumerate(rows):
            source = row.get(data_source_column)
            if data_sources and source not in data_sources:
                continue
            try:
                self.tasks.append(
                    self._task(index, row, prompt_column, answer_column, source, prompt_template, answer_extraction)
                )
            except _RowError as exc:
                errors.append(f"{path}: row {index}: column {exc.column!r}: {exc.reason}")
        if errors:
            more = len(errors) - MAX_REPORTED_ROWS
            tail = [f"... and {more} more bad row(s)"] if more > 0 else []
            raise TaskSourceError("\n".join(errors[:MAX_REPORTED_ROWS] + tail))
        if not self.tasks:
            raise TaskSourceError(f"{path}: no row has a {data_source_column} in {data_sources}")

    def _task(self, index, row, prompt_column, answer_column, source, template, extraction) -> Task:
        try:
            instruction = instruction_of(column_value(row, prompt_column), template)
        except KeyError:
            raise _RowError(prompt_column, "missing") from None
        except ValueError as exc:
            raise _RowError(prompt_column, str(exc)) from None
        try:
            answer = column_value(row, answer_column)
        except KeyError:
            raise _RowError(answer_column, "missing") from None
        if answer is None or (isinstance(answer, str) and not answer.strip()):
            raise _RowError(answer_column, "empty ground truth")
        metadata: dict[str, Any] = {"row": index}
        if source is not None:
            metadata["data_source"] = str(source)
        if isinstance(row.get("extra_info"), dict):
            metadata["extra_info"] = json.loads(json.dumps(row["extra_info"], default=str))
        if extraction:
            metadata["answer_extraction"] = extraction
        return Task(
            id=f"{self.domain}/{index}",
            domain=self.domain,
            instruction=instruction,
            verifier="exact",
            answer=answer,
            metadata=metadata,
        )

    def __len__(self) -> int:
        return len(self.tasks)

    def get(self, index: int) -> Task:
        return self.tasks[index]


class _RowError(Exception):
    def __init__(self, column: str, reason: str) -> None:
        super().__init__(reason)
        self.column, self.reason = column, reason
