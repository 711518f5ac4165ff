"""Whole-file writes that a reader (or a kill mid-write) never sees half done: the content goes
to a temp file beside the target, which is then renamed over it (atomic on POSIX within one
file system). The temp name is unique per process and thread, so concurrent writers of one
path never share it: the last rename wins."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any


def write_text_atomic(path: Path | str, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: Path | str, data: bytes) -> None:
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_json_atomic(path: Path | str, data: Any, *, indent: int | None = 2, sort_keys: bool = True) -> None:
    """`data` as JSON, one line when indent is None; what JSON cannot hold is written as str()."""
    write_text_atomic(path, json.dumps(data, indent=indent, sort_keys=sort_keys, default=str) + "\n")
