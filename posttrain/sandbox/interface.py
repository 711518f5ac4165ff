"""The `Sandbox` interface every backend implements, and its records."""

from __future__ import annotations

import asyncio
import io
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from posttrain.errors import PosttrainError

DEFAULT_OUTPUT_LIMIT = 1 << 20  # bytes kept of each of stdout and stderr
WORKSPACE_DIRS = ("app", "tmp", "tests", "logs", "solution")  # what a sandbox holds of its own in every backend
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"  # PATH where nothing sets one


class SandboxError(PosttrainError):
    """A sandbox that cannot start or be used; the message says what to do."""


class SandboxLimits(BaseModel):
    """Per-sandbox resource limits. `None` means unlimited (not recommended outside tests)."""

    model_config = ConfigDict(extra="forbid")

    memory_mb: int | None = Field(2048, ge=16, description="memory (cgroup); exceeding it OOM-kills the command")
    pids: int | None = Field(256, ge=4, description="processes and threads at once (cgroup)")
    cpus: float | None = Field(1.0, gt=0, description="CPU share in cores (cgroup CFS quota)")
    disk_mb: int | None = Field(
        1024, ge=1, description="workspace size: everything written to /app, /tmp, /logs, /tests"
    )
    timeout_s: float = Field(600.0, gt=0, description="default wall-time limit of one exec")
    output_bytes: int = Field(DEFAULT_OUTPUT_LIMIT, ge=1024, description="bytes kept of stdout and of stderr")
    open_files: int = Field(1024, ge=16, description="RLIMIT_NOFILE")


@dataclass
class ExecResult:
    exit_code: int
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False
    oom_killed: bool = False
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    # the sandbox's own process that ran the command was killed from outside (bwrap: a signal
    # nothing in its PID namespace can send), or the sandbox was closed under it: the command
    # was cut off by the infrastructure, and its exit status says nothing about the command
    sandbox_killed: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.oom_killed


@dataclass
class SandboxSpec:
    """What a sandbox is made from: shared read-only layers (an environment's cached build),
    the workdir, env vars, limits and network policy."""

    layers: list[Path] = field(default_factory=list)  # lowest first; shared between sandboxes
    workdir: str = "/app"
    env: dict[str, str] = field(default_factory=dict)
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    allow_network: bool = False
    rootfs: Path | None = None  # a root filesystem directory instead of the host's system dirs
    system_writable: bool = False  # /usr, /etc, /var, /opt writable (overlays over the host's): apt/pip installs
    image: str | None = None  # docker backend: the container's image (a task's built or pulled one)


def directory_tar(local_dir: Path) -> bytes:
    """An uncompressed tar of a directory's contents (names relative to it), for unpacking
    into a sandbox through a command's stdin."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for child in sorted(Path(local_dir).iterdir()):
            tar.add(child, arcname=child.name)
    return buffer.getvalue()


def command_argv(cmd: str | list[str], shell: str = "bash") -> list[str]:
    """A string runs under the shell; a list runs as given."""
    if isinstance(cmd, str):
        return [shell, "-c", cmd]
    argv = [str(a) for a in cmd]
    if not argv:
        raise SandboxError("exec needs a command")
    return argv


def exec_timeout(timeout: float | None, limits: SandboxLimits) -> float:
    """The wall-time limit of one exec: the call's, else the sandbox's default."""
    timeout_s = limits.timeout_s if timeout is None else float(timeout)
    if timeout_s <= 0:
        raise SandboxError(f"exec timeout must be positive, got {timeout}")
    return timeout_s


class Sandbox(Protocol):
    id: str

    def exec(
        self,
        cmd: str | list[str],
        timeout: float | None = None,
        stdin: str | bytes | None = None,
        env: dict[str, str] | None = None,
        workdir: str | None = None,
    ) -> ExecResult: ...

    def read_file(self, path: str) -> bytes: ...

    def write_file(self, path: str, data: str | bytes, mode: int = 0o644) -> None: ...

    def upload(self, local_dir: Path, target: str) -> None: ...

    def download(self, path: str, local_dir: Path) -> Path: ...

    def snapshot(self) -> str: ...

    def restore(self, snapshot_id: str) -> None: ...

    def close(self) -> None: ...


class AsyncSandboxMixin:
    """`async` variants for rollouts: the blocking calls run in a worker thread."""

    async def aexec(self, cmd, timeout=None, stdin=None, env=None, workdir=None) -> ExecResult:
        return await asyncio.to_thread(self.exec, cmd, timeout, stdin, env, workdir)

    async def aread_file(self, path: str) -> bytes:
        return await asyncio.to_thread(self.read_file, path)

    async def awrite_file(self, path: str, data: str | bytes, mode: int = 0o644) -> None:
        await asyncio.to_thread(self.write_file, path, data, mode)

    async def asnapshot(self) -> str:
        return await asyncio.to_thread(self.snapshot)

    async def arestore(self, snapshot_id: str) -> None:
        await asyncio.to_thread(self.restore, snapshot_id)

    async def aclose(self) -> None:
        await asyncio.to_thread(self.close)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()
