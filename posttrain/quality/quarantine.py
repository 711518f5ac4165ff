"""The quarantine list: one task id per line, then a tab and the reason. `#` starts a comment.
Training and evaluation read it and skip those tasks."""

from __future__ import annotations

from pathlib import Path

from posttrain.errors import PosttrainError
from posttrain.storage.atomic import write_text_atomic


def write_quarantine(path: Path, entries: list[tuple[str, str, str]]) -> None:
    """entries: (task id, verdict, reason). Written whole, then renamed into place."""
    lines = ["# posttrain inspect: quarantined tasks (id<TAB>verdict: reason)"]
    lines += [f"{task_id}\t{verdict}: {' '.join(reason.split())[:500]}" for task_id, verdict, reason in entries]
    write_text_atomic(path, "\n".join(lines) + "\n")


def read_quarantine(path: Path | str) -> dict[str, str]:
    """task id -> reason."""
    path = Path(path)
    if not path.is_file():
        raise PosttrainError(f"{path}: quarantine file not found (write one with posttrain inspect)")
    entries: dict[str, str] = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        task_id, _, reason = line.partition("\t")
        if not task_id or any(c.isspace() for c in task_id.strip()):
            task_id, _, reason = line.partition(" ")
        if not task_id.strip():
            raise PosttrainError(f"{path}:{number}: no task id")
        entries[task_id.strip()] = reason.strip() or "quarantined"
    return entries


def split_quarantined(tasks: list, quarantined: dict[str, str]) -> tuple[list, list[tuple[str, str]]]:
    """(tasks to keep, [(id, reason)] skipped)."""
    keep = [t for t in tasks if t.id not in quarantined]
    skipped = [(t.id, quarantined[t.id]) for t in tasks if t.id in quarantined]
    return keep, skipped
