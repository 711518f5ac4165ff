"""A sandbox for one attempt at a terminal task: its environment built (cached layers) and its
limits and network policy applied."""

from __future__ import annotations

from pathlib import Path

from posttrain.sandbox.environment_builder import BuiltEnvironment, build_environment
from posttrain.sandbox.factory import create_sandbox
from posttrain.sandbox.interface import Sandbox, SandboxLimits
from posttrain.tasks.records import Environment, Task

MAX_WORKSPACE_MB = 4096  # a tmpfs cap, whatever a task.toml asks for (Harbor's default is 10 GB)


def build_task_environment(task: Task) -> BuiltEnvironment:
    environment = task.environment or Environment()
    source = Path(environment.dockerfile_dir) if environment.dockerfile_dir else environment
    return build_environment(source, timeout_s=float(task.metadata.get("build_timeout_s", 600.0)))


def task_limits(task: Task) -> SandboxLimits:
    storage = int(task.metadata.get("storage_mb") or 1024)
    return SandboxLimits(
        memory_mb=task.limits.memory_mb,
        cpus=task.limits.cpus,
        disk_mb=min(storage, MAX_WORKSPACE_MB),
        timeout_s=task.limits.agent_timeout_s,
    )


def open_task_sandbox(task: Task, backend: str | None = None, built: BuiltEnvironment | None = None) -> Sandbox:
    built = built or build_task_environment(task)
    allow_network = task.environment.allow_network if task.environment else False
    return create_sandbox(built.spec(task_limits(task), allow_network=allow_network), backend)
