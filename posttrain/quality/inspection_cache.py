"""Inspection results by content. A task whose files, built environment, inspection options and
checking code are all unchanged gets its last report back instead of being inspected again,
so `quality_gate = true` in a run config, or CI inspecting a suite on every push, pays only for
the tasks that changed. Reports are kept whole (every check with its evidence); the signal
check depends on the policy and always runs afresh.

Not kept: a report whose environment did not build (a build can fail for a passing reason, a
mirror down) or where the inspector itself failed. `posttrain inspect --no-cache` inspects
again and replaces the stored report."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import asdict
from functools import lru_cache
from pathlib import Path

from posttrain.cache import cache_dir
from posttrain.quality.verdicts import Check
from posttrain.storage.atomic import write_json_atomic

# The code that decides verdicts: a change to any of it makes every stored report stale.
_CHECKING_PACKAGES = ("quality", "agent", "sandbox", "tasks")
FORMAT = 1


def default_cache_dir() -> Path:
    return cache_dir() / "inspections"


@lru_cache(maxsize=1)
def checking_code_fingerprint() -> str:
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256(f"{FORMAT} {sys.version_info[:2]}".encode())
    for package in _CHECKING_PACKAGES:
        for path in sorted((root / package).rglob("*")):
            if path.suffix in (".py", ".c") and path.is_file():
                digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def task_fingerprint(directory: Path) -> str:
    """Every file under the task directory: its relative path, mode and bytes (a link: its target)."""
    digest = hashlib.sha256()
    for path in sorted(directory.rglob("*")):
        relative = str(path.relative_to(directory)).encode()
        if path.is_symlink():
            digest.update(b"L" + relative + b"\0" + os.readlink(path).encode() + b"\0")
        elif path.is_file():
            digest.update(b"F" + relative + b"\0" + oct(path.stat().st_mode & 0o7777).encode() + b"\0")
            with open(path, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    digest.update(chunk)
            digest.update(b"\0")
        elif path.is_dir():
            digest.update(b"D" + relative + b"\0")
    return digest.hexdigest()


def inspection_key(directory: Path, environment_key: str, options: dict) -> str:
    """The key of one task's inspection: its files, its built environment (the last layer's
    key), the options that change what is checked, and the checking code."""
    payload = json.dumps(
        {
            "task": task_fingerprint(directory),
            "environment": environment_key,
            "options": options,
            "code": checking_code_fingerprint(),
        },
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()


class InspectionCache:
    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(root) if root is not None else default_cache_dir()

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> tuple[list[Check], dict] | None:
        """(checks, stored metadata) or None. An unreadable entry is a miss, never an error."""
        try:
            data = json.loads(self._path(key).read_text())
            return [Check(**c) for c in data["checks"]], {
                "stored_at": data.get("stored_at"),
                "duration_s": data.get("duration_s"),
            }
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, key: str, checks: list[Check], duration_s: float, stored_at: str) -> None:
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_json_atomic(
                path,
                {"checks": [asdict(c) for c in checks], "duration_s": duration_s, "stored_at": stored_at},
                indent=None,
                sort_keys=False,
            )
        except OSError:
            pass  # a read-only or full cache costs speed next time, not this inspection
