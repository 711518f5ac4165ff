"""Choose and create sandboxes by backend name."""

from __future__ import annotations

import os
import shutil
import sys

from posttrain.sandbox.interface import Sandbox, SandboxError, SandboxSpec

BACKENDS = ("bwrap", "local", "docker")


def default_backend() -> str:
    """bwrap on Linux when it is installed and we are root; else the unisolated local one."""
    if sys.platform == "linux" and shutil.which("bwrap") and os.geteuid() == 0:
        return "bwrap"
    return "local"


def create_sandbox(spec: SandboxSpec | None = None, backend: str | None = None, **options) -> Sandbox:
    backend = backend or default_backend()
    if backend == "bwrap":
        from posttrain.sandbox.bwrap_backend import BwrapSandbox

        return BwrapSandbox(spec, **options)
    if backend == "local":
        from posttrain.sandbox.local_backend import LocalSandbox

        return LocalSandbox(spec, **options)
    if backend == "docker":
        from posttrain.sandbox.docker_backend import DockerSandbox

        return DockerSandbox(spec, **options)
    raise SandboxError(f"unknown sandbox backend {backend!r}; choose one of {', '.join(BACKENDS)}")
