"""The workspace as an overlayfs stack.

    lower layers (read-only):  skeleton  <  environment layers (shared)  <  snapshots (own)
    upper layer (writable):    upper-N

`snapshot()` renames the current upper into a frozen layer and starts an empty one; `restore()`
drops every layer above the snapshot. Both are renames and mkdirs: milliseconds, whatever the
workspace holds. Nothing is mounted between commands: each exec mounts the stack inside its own
private mount namespace, so a crashed host process leaves no overlay mount behind.

A sandbox's writable state lives on its own tmpfs when it has a disk quota (the tmpfs size is
the quota), else on the host filesystem.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import threading
import uuid
from pathlib import Path

from posttrain.sandbox.interface import SandboxError

WORKSPACE_DIRS = ("app", "tmp", "tests", "logs", "root", "solution")


def skeleton_layer(base: Path) -> Path:
    """An empty layer with the workspace directories: the bottom of every stack."""
    skeleton = base / ("skeleton-" + "-".join(WORKSPACE_DIRS))  # a new name when the set changes
    if not all((skeleton / name).is_dir() for name in WORKSPACE_DIRS):
        tmp = base / f".skeleton-{uuid.uuid4().hex}"
        for name in WORKSPACE_DIRS:
            (tmp / name).mkdir(parents=True)
        (tmp / "tmp").chmod(0o1777)
        try:
            os.rename(tmp, skeleton)
        except OSError:  # another process made it first
            shutil.rmtree(tmp, ignore_errors=True)
    return skeleton


class OverlayWorkspace:
    def __init__(self, state_dir: Path, shared_layers: list[Path], skeleton: Path, disk_mb: int | None) -> None:
        self.state_dir = state_dir
        self.rw = state_dir / "rw"
        self.merged = state_dir / "merged"
        self.rw.mkdir(parents=True)
        self.merged.mkdir()
        (state_dir / "owner.pid").write_text(str(os.getpid()))
        self.tmpfs = False
        if disk_mb is not None:
            # size counts everything the sandbox writes; nr_inodes stops a flood of empty files
            _mount_tmpfs(self.rw, f"size={disk_mb}m,nr_inodes={max(disk_mb * 64, 4096)},mode=0755")
            self.tmpfs = True
        self.base_layers = [skeleton, *shared_layers]  # lowest first
        self.snapshots: list[tuple[str, Path]] = []  # (id, frozen layer), oldest first
        self._generation = 0
        self._lock = threading.Lock()
        self._new_upper()

    def _new_upper(self) -> None:
        self._generation += 1
        self.upper = self.rw / f"upper-{self._generation}"
        self.work = self.rw / f"work-{self._generation}"
        self.upper.mkdir()
        self.work.mkdir()

    def mount_options(self) -> str:
        lowers = [*self.base_layers, *(layer for _, layer in self.snapshots)]
        lowerdir = ":".join(str(p) for p in reversed(lowers))  # overlayfs: leftmost is the top
        return f"lowerdir={lowerdir},upperdir={self.upper},workdir={self.work}"

    def snapshot(self) -> str:
        with self._lock:
            snapshot_id = uuid.uuid4().hex[:12]
            frozen = self.rw / f"layer-{snapshot_id}"
            os.rename(self.upper, frozen)
            self._discard(self.work)
            self.snapshots.append((snapshot_id, frozen))
            self._new_upper()
            return snapshot_id

    def restore(self, snapshot_id: str) -> None:
        with self._lock:
            ids = [sid for sid, _ in self.snapshots]
            if snapshot_id not in ids:
                raise SandboxError(f"unknown snapshot {snapshot_id!r}; this sandbox has {ids or 'none'}")
            keep = ids.index(snapshot_id) + 1
            for _, layer in self.snapshots[keep:]:
                self._discard(layer)
            self.snapshots = self.snapshots[:keep]
            self._discard(self.upper)
            self._discard(self.work)
            self._new_upper()

    def _discard(self, path: Path) -> None:
        """Rename out of the way now (O(1)); the bytes are freed later, off the hot path."""
        trash = self.rw / f"trash-{uuid.uuid4().hex}"
        os.rename(path, trash)
        threading.Thread(target=shutil.rmtree, args=(trash,), kwargs={"ignore_errors": True}, daemon=True).start()

    def close(self) -> None:
        if self.tmpfs:
            _unmount(self.rw)
        shutil.rmtree(self.state_dir, ignore_errors=True)



_libc = ctypes.CDLL(None, use_errno=True)
_MNT_DETACH = 2


def _mount_tmpfs(target: Path, options: str) -> None:
    """mount(2) directly: a `mount` subprocess would cost milliseconds per sandbox."""
    if _libc.mount(b"posttrain-sandbox", str(target).encode(), b"tmpfs", 0, options.encode()) != 0:
        errno = ctypes.get_errno()
        raise SandboxError(f"cannot mount the workspace tmpfs at {target}: {os.strerror(errno)} "
                           "(the bwrap backend needs root)")


def _unmount(target: Path) -> None:
    _libc.umount2(str(target).encode(), _MNT_DETACH)
