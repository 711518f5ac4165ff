"""Compile the sandbox launcher (launcher.c) once per machine; None when no C compiler exists,
and the backend falls back to the equivalent shell pipeline."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import threading
from functools import lru_cache
from pathlib import Path

from posttrain.cache import cache_dir

_SOURCE = Path(__file__).with_name("launcher.c")
# lru_cache does not stop two threads' first calls from both building: they would write the
# same per-process temporary file, and the second rename would find it gone
_BUILD_LOCK = threading.Lock()


def launcher_path() -> str | None:
    with _BUILD_LOCK:
        return _launcher_path()


@lru_cache(maxsize=1)
def _launcher_path() -> str | None:
    if os.environ.get("POSTTRAIN_SANDBOX_NO_LAUNCHER"):
        return None
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return None
    source = _SOURCE.read_bytes()
    target = cache_dir() / "bin" / f"sandbox-launcher-{hashlib.sha256(source).hexdigest()[:12]}"
    if target.is_file():
        return str(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")  # other processes may build it too
    result = subprocess.run([compiler, "-O2", "-o", str(tmp), str(_SOURCE)], capture_output=True, text=True)
    if result.returncode != 0:
        tmp.unlink(missing_ok=True)
        return None
    os.replace(tmp, target)
    return str(target)
