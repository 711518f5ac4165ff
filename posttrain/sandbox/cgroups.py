"""Per-sandbox cgroups: memory, pids and CPU limits, OOM detection and tree kill.

cgroup v1 (one hierarchy per controller, as on this machine) and v2 (unified) are both handled.
Sandbox cgroups are created under the calling process's own cgroup (read from
/proc/self/cgroup), never at the top of the hierarchy: a process may only manage its subtree.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from posttrain.sandbox.interface import SandboxError

CGROUP_ROOT = Path("/sys/fs/cgroup")
_V1_CONTROLLERS = ("memory", "pids", "cpu")


def _own_cgroups() -> dict[str, str]:
    """controller -> path of this process's cgroup ("" key for the v2 unified hierarchy)."""
    owned: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            owned[controller] = path
    return owned


def cgroup_version() -> int:
    if (CGROUP_ROOT / "cgroup.controllers").is_file():
        return 2
    if all((CGROUP_ROOT / c).is_dir() for c in _V1_CONTROLLERS):
        return 1
    return 0


@dataclass
class SandboxCgroup:
    """The cgroup directories of one sandbox (one per v1 controller, or one v2 directory)."""

    dirs: dict[str, Path]  # controller (or "unified") -> directory
    version: int

    @classmethod
    def create(cls, name: str, memory_mb: int | None, pids: int | None, cpus: float | None) -> SandboxCgroup:
        version = cgroup_version()
        if version == 0:
            raise SandboxError("no usable cgroup hierarchy under /sys/fs/cgroup; limits need cgroups v1 or v2")
        own = _own_cgroups()
        dirs: dict[str, Path] = {}
        try:
            if version == 1:
                for controller in _V1_CONTROLLERS:
                    base = CGROUP_ROOT / controller / own.get(controller, "/").lstrip("/") / "posttrain"
                    dirs[controller] = base / name
            else:
                base = CGROUP_ROOT / own.get("", "/").lstrip("/") / "posttrain"
                base.mkdir(exist_ok=True)
                _enable_v2_controllers(base)
                dirs["unified"] = base / name
            for d in dirs.values():
                d.mkdir(parents=True, exist_ok=True)
            group = cls(dirs, version)
            group._set_limits(memory_mb, pids, cpus)
            return group
        except PermissionError as exc:
            for d in dirs.values():
                _rmdir(d)
            raise SandboxError(
                f"cannot create sandbox cgroups ({exc.filename}): run as root, or give this user a delegated cgroup"
            ) from exc

    def _set_limits(self, memory_mb: int | None, pids: int | None, cpus: float | None) -> None:
        if self.version == 1:
            if memory_mb is not None:
                _write(self.dirs["memory"] / "memory.limit_in_bytes", memory_mb << 20)
                swap = self.dirs["memory"] / "memory.memsw.limit_in_bytes"
                if swap.exists():
                    _write(swap, memory_mb << 20)
            if pids is not None:
                _write(self.dirs["pids"] / "pids.max", pids)
            if cpus is not None:
                _write(self.dirs["cpu"] / "cpu.cfs_period_us", 100_000)
                _write(self.dirs["cpu"] / "cpu.cfs_quota_us", int(cpus * 100_000))
        else:
            d = self.dirs["unified"]
            if memory_mb is not None:
                _write(d / "memory.max", memory_mb << 20)
                if (d / "memory.swap.max").exists():
                    _write(d / "memory.swap.max", 0)
            if pids is not None:
                _write(d / "pids.max", pids)
            if cpus is not None:
                _write(d / "cpu.max", f"{int(cpus * 100_000)} 100000")

    @property
    def procs_files(self) -> list[Path]:
        """Files a process writes its pid into to join every controller of this sandbox."""
        return [d / "cgroup.procs" for d in self.dirs.values()]

    def pids(self) -> list[int]:
        d = self.dirs.get("pids", self.dirs.get("unified"))
        try:
            return [int(p) for p in (d / "cgroup.procs").read_text().split()]
        except FileNotFoundError:
            return []

    def oom_kills(self) -> int:
        """How many processes the kernel OOM-killed in this cgroup so far."""
        path = (
            (self.dirs["memory"] / "memory.oom_control")
            if self.version == 1
            else (self.dirs["unified"] / "memory.events")
        )
        try:
            for line in path.read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except FileNotFoundError:
            pass
        return 0

    def memory_failures(self) -> int:
        if self.version == 1:
            try:
                return int((self.dirs["memory"] / "memory.failcnt").read_text())
            except FileNotFoundError:
                return 0
        return 0

    def kill_all(self, deadline_s: float = 5.0) -> None:
        """SIGKILL every process in the sandbox, repeating until none is left (a process can
        fork between our read and our kill; the pids limit bounds how long that can go on)."""
        end = time.monotonic() + deadline_s
        while True:
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            if time.monotonic() > end:
                return
            time.sleep(0.001)

    def remove(self) -> None:
        self.kill_all()
        for d in self.dirs.values():
            _rmdir(d)


def _enable_v2_controllers(base: Path) -> None:
    try:
        _write(base / "cgroup.subtree_control", "+memory +pids +cpu")
    except OSError:
        pass  # already enabled, or not delegable; limits that fail to apply raise later


def _write(path: Path, value) -> None:
    with open(path, "w") as f:
        f.write(str(value))


def _rmdir(path: Path) -> None:
    for _ in range(100):
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:  # busy: processes still exiting
            time.sleep(0.005)
