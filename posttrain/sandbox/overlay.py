"""The workspace as an overlayfs stack.

    lower layers (read-only):  skeleton  <  environment layers (shared)  <  snapshots (own)
    upper layer (writable):    upper-N

`snapshot()` renames the current upper into a frozen layer and starts an empty one; `restore()`
drops every layer above the snapshot. Both are renames and mkdirs: milliseconds, whatever the
workspace holds. Nothing is mounted between commands: each exec mounts the stack inside its own
private mount namespace, so a crashed host process leaves no overlay mount behind.

A sandbox's writable state lives on its own tmpfs when it has a disk quota (the tmpfs size is
the quota), else on the host filesystem.

With `system=True` the system directories (/usr, /etc, /var, /opt) are writable too, each its
own overlay over the host's directory (so `apt-get install` and `pip install` work in a
Dockerfile RUN step): lowers are the layers' usr/, etc/... above the host's, uppers are
sys-upper-N/usr and so on. A snapshot moves those uppers into the frozen layer, which is then
shaped like a root filesystem (app/, tmp/, usr/, var/ ...), and every later stack reads it.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import stat
import threading
import uuid
from pathlib import Path

from posttrain.sandbox.interface import WORKSPACE_DIRS, SandboxError

# bwrap shows the host's system read-only, so HOME (/root) is one of the stack's own directories too
OVERLAY_DIRS = (*WORKSPACE_DIRS, "root")
SYSTEM_DIRS = ("usr", "etc", "var", "opt")  # writable in system mode, each over the host's


def skeleton_layer(base: Path) -> Path:
    """An empty layer with the workspace directories: the bottom of every stack."""
    skeleton = base / ("skeleton-" + "-".join(OVERLAY_DIRS))  # a new name when the set changes
    if not all((skeleton / name).is_dir() for name in OVERLAY_DIRS):
        tmp = base / f".skeleton-{uuid.uuid4().hex}"
        for name in OVERLAY_DIRS:
            (tmp / name).mkdir(parents=True)
        (tmp / "tmp").chmod(0o1777)
        try:
            os.rename(tmp, skeleton)
        except OSError:  # another process made it first
            shutil.rmtree(tmp, ignore_errors=True)
    return skeleton


class OverlayWorkspace:
    def __init__(
        self,
        state_dir: Path,
        shared_layers: list[Path],
        skeleton: Path,
        disk_mb: int | None,
        system_lowers: dict[str, Path] | None = None,
    ) -> None:
        """system_lowers: system dir name -> the host directory under it (system mode), or None."""
        self.state_dir = state_dir
        self.system_lowers = dict(system_lowers or {})
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
        self.sys_upper = self.rw / f"sys-upper-{self._generation}"
        self.sys_work = self.rw / f"sys-work-{self._generation}"
        for name in self.system_lowers:
            (self.sys_upper / name).mkdir(parents=True)
            (self.sys_work / name).mkdir(parents=True)

    def system_target(self, name: str) -> Path:
        return self.state_dir / "sys" / name

    def mounts(self) -> list[tuple[str, Path]]:
        """(overlay options, mount point) for each overlay an exec mounts: the workspace, then
        one per system directory in system mode."""
        lowers = [*self.base_layers, *(layer for _, layer in self.snapshots)]
        lowerdir = ":".join(str(p) for p in reversed(lowers))  # overlayfs: leftmost is the top
        mounts = [(f"lowerdir={lowerdir},upperdir={self.upper},workdir={self.work}", self.merged)]
        for name, host in self.system_lowers.items():
            layered = [layer / name for layer in lowers if (layer / name).is_dir()]
            lowerdir = ":".join(str(p) for p in [*reversed(layered), host])
            target = self.system_target(name)
            target.mkdir(parents=True, exist_ok=True)
            mounts.append(
                (f"lowerdir={lowerdir},upperdir={self.sys_upper / name},workdir={self.sys_work / name}", target)
            )
        return mounts

    def mount_options(self) -> str:
        return self.mounts()[0][0]

    def snapshot(self) -> str:
        with self._lock:
            snapshot_id = uuid.uuid4().hex[:12]
            frozen = self.rw / f"layer-{snapshot_id}"
            os.rename(self.upper, frozen)
            self._discard(self.work)
            if self.system_lowers:
                for name in self.system_lowers:
                    if any((self.sys_upper / name).iterdir()):
                        os.rename(self.sys_upper / name, frozen / name)
                self._discard(self.sys_upper)
                self._discard(self.sys_work)
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
            if self.system_lowers:
                self._discard(self.sys_upper)
                self._discard(self.sys_work)
            self._new_upper()

    def discard_system_changes(self, select) -> list[str]:
        """Drop this sandbox's own changes (from every snapshot and the live upper) to the
        system paths `select(path, in_image)` picks, so those paths read as the image built
        them again. Returns the paths dropped. Between commands nothing is mounted, so the
        layers can be edited in place."""
        dropped: set[str] = set()
        with self._lock:
            private = [layer for _, layer in self.snapshots] + [self.sys_upper]
            for name in self.system_lowers:
                for layer in private:
                    root = layer / name
                    if not root.is_dir():
                        continue
                    for directory, dirs, files in os.walk(root):
                        for entry in [*files, *(d for d in dirs if (Path(directory) / d).is_symlink())]:
                            local = Path(directory) / entry
                            path = "/" + str(local.relative_to(layer))
                            if select(path, self._in_image(name, local.relative_to(root))):
                                local.unlink()
                                dropped.add(path)
        return sorted(dropped)

    def image_has(self, path: str) -> bool:
        """Whether the image (shared layers over the host), not this sandbox, has `path`:
        system paths only."""
        parts = Path(path).parts
        if len(parts) < 2 or parts[1] not in self.system_lowers:
            return os.path.lexists(path) if len(parts) > 1 and parts[1] in ("usr", "etc", "var", "opt") else False
        return self._in_image(parts[1], Path(*parts[2:]))

    def _in_image(self, name: str, relative: Path) -> bool:
        for layer in reversed(self.base_layers):
            candidate = layer / name / relative
            if os.path.lexists(candidate):
                return not _is_whiteout(candidate)
        return os.path.lexists(self.system_lowers[name] / relative)

    def _discard(self, path: Path) -> None:
        """Rename out of the way now (O(1)); the bytes are freed later, off the hot path."""
        trash = self.rw / f"trash-{uuid.uuid4().hex}"
        os.rename(path, trash)
        threading.Thread(target=shutil.rmtree, args=(trash,), kwargs={"ignore_errors": True}, daemon=True).start()

    def close(self) -> None:
        if self.tmpfs:
            _unmount(self.rw)
        shutil.rmtree(self.state_dir, ignore_errors=True)


def _is_whiteout(path: Path) -> bool:
    """overlayfs marks a deleted lower file with a 0/0 character device."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISCHR(info.st_mode) and info.st_rdev == 0


_libc = ctypes.CDLL(None, use_errno=True)
_MNT_DETACH = 2


def _mount_tmpfs(target: Path, options: str) -> None:
    """mount(2) directly: a `mount` subprocess would cost milliseconds per sandbox."""
    if _libc.mount(b"posttrain-sandbox", str(target).encode(), b"tmpfs", 0, options.encode()) != 0:
        errno = ctypes.get_errno()
        raise SandboxError(
            f"cannot mount the workspace tmpfs at {target}: {os.strerror(errno)} (the bwrap backend needs root)"
        )


def _unmount(target: Path) -> None:
    _libc.umount2(str(target).encode(), _MNT_DETACH)
