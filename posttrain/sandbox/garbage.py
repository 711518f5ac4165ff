"""Reclaim what sandboxes of dead processes left behind (a kill -9 skips `close()`):
their workspace tmpfs mounts, directories and cgroups."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from posttrain.sandbox.cgroups import CGROUP_ROOT
from posttrain.sandbox.overlay import _unmount

OWNER_FILE = "owner.pid"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def collect_garbage(base: Path) -> list[str]:
    """Remove sandboxes under `base` whose owner process is gone; returns their ids."""
    removed = []
    sandboxes = base / "sandboxes"
    if not sandboxes.is_dir():
        return removed
    for state in sandboxes.iterdir():
        try:
            owner = int((state / OWNER_FILE).read_text())
        except (FileNotFoundError, ValueError):
            owner = None
        if owner is not None and _alive(owner):
            continue
        _unmount(state / "rw")
        shutil.rmtree(state, ignore_errors=True)
        for cgroup in CGROUP_ROOT.glob(f"**/posttrain/sbx-{state.name}"):
            try:
                for pid in (cgroup / "cgroup.procs").read_text().split():
                    os.kill(int(pid), 9)
                cgroup.rmdir()
            except OSError:
                pass
        removed.append(state.name)
    return removed
