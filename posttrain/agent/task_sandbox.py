"""A sandbox for one attempt at a terminal task: its environment built (cached layers) and its
limits and network policy applied."""

from __future__ import annotations

from pathlib import Path

from posttrain.sandbox.base_image import stand_in
from posttrain.sandbox.environment_builder import BuiltEnvironment, build_environment
from posttrain.sandbox.factory import create_sandbox, default_backend
from posttrain.sandbox.interface import Sandbox, SandboxError, SandboxLimits
from posttrain.tasks.records import Environment, Task

MAX_WORKSPACE_MB = 4096  # a tmpfs cap, whatever a task.toml asks for (Harbor's default is 10 GB)


def build_task_environment(task: Task, backend: str | None = None) -> BuiltEnvironment:
    """The task's environment for `backend`: under docker, an image the Docker engine builds
    from the task's Dockerfile (or its `docker_image`, pulled); under bwrap (and local), cached
    layers built on the host, after refusing a `docker_image` the host cannot stand in for."""
    environment = task.environment or Environment()
    if (backend or default_backend()) == "docker":
        return _docker_environment(task, environment)
    refuse_unusable_image(task)
    source = Path(environment.dockerfile_dir) if environment.dockerfile_dir else environment
    return build_environment(source, timeout_s=float(task.metadata.get("build_timeout_s", 600.0)))


def refuse_unusable_image(task: Task) -> None:
    """A task that names a `docker_image` runs on the host's system under bwrap: refuse it
    unless the host can stand in for that image (base_image.py), rather than run it on the
    wrong system without a word."""
    image = task.metadata.get("docker_image")
    if not image:
        return
    verdict = stand_in(image)
    if not verdict.ok:
        raise SandboxError(
            f"task {task.id}: environment.docker_image {image!r}: the bwrap backend runs tasks on the host's "
            f"system, which cannot stand in for this image; run it with --backend docker"
        )


def _docker_environment(task: Task, environment: Environment) -> BuiltEnvironment:
    from posttrain.sandbox.docker_images import build_task_image, image_workdir, pull_task_image

    image = task.metadata.get("docker_image")
    if image:  # Harbor: a prebuilt image is used as it is, before any Dockerfile
        image = pull_task_image(image)
    elif environment.dockerfile_dir:
        image = build_task_image(Path(environment.dockerfile_dir))
    else:
        return build_environment(environment, timeout_s=float(task.metadata.get("build_timeout_s", 600.0)))
    return BuiltEnvironment(layers=[], workdir=image_workdir(image), env={}, image=image)


def task_limits(task: Task) -> SandboxLimits:
    storage = int(task.metadata.get("storage_mb") or 1024)
    return SandboxLimits(
        memory_mb=task.limits.memory_mb,
        cpus=task.limits.cpus,
        disk_mb=min(storage, MAX_WORKSPACE_MB),
        timeout_s=task.limits.agent_timeout_s,
    )


def open_task_sandbox(task: Task, backend: str | None = None, built: BuiltEnvironment | None = None) -> Sandbox:
    built = built or build_task_environment(task, backend)
    allow_network = task.environment.allow_network if task.environment else False
    return create_sandbox(built.spec(task_limits(task), allow_network=allow_network), backend)
