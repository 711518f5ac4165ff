"""A task's image for the docker backend, made by the Docker engine itself, as Harbor does:

    build_task_image(environment_dir, build_args)   `docker build` of the task's Dockerfile
                                                      (the directory is the build context)
    pull_task_image("python:3.12-slim")              a task's `docker_image`, used as it is

Both go through the Docker SDK (`pip install posttrain[docker]`). A built image is tagged
`posttrain-env:<digest>`, the digest of the context's files, the Dockerfile and the build args,
so an unchanged environment is built once and found again; the engine's own layer cache does
the rest. The bwrap backend cannot run an image: it builds the Dockerfile's steps on the host
(environment_builder.py) and refuses a `docker_image` the host cannot stand in for.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from posttrain.sandbox.interface import SandboxError

BUILT_REPOSITORY = "posttrain-env"


def image_tag(context: Path, dockerfile: str = "Dockerfile", build_args: dict[str, str] | None = None) -> str:
    """posttrain-env:<digest of every file in the context, the Dockerfile's name and the args>."""
    digest = hashlib.sha256()
    for path in sorted(p for p in context.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(context)).encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    digest.update(dockerfile.encode() + b"\0")
    for key, value in sorted((build_args or {}).items()):
        digest.update(f"{key}={value}\0".encode())
    return f"{BUILT_REPOSITORY}:{digest.hexdigest()[:16]}"


def build_task_image(
    context: Path, build_args: dict[str, str] | None = None, dockerfile: str = "Dockerfile", client=None
) -> str:
    """Build the Dockerfile in `context` with the Docker engine (unless an image of the same
    inputs exists); returns its tag. SandboxError with the build's last log lines on failure."""
    from posttrain.sandbox.docker_backend import _import_docker, connect

    if not (context / dockerfile).is_file():
        raise SandboxError(f"{context / dockerfile}: no Dockerfile to build")
    client = client or connect(timeout=600)
    tag = image_tag(context, dockerfile, build_args)
    errors = _import_docker().errors
    try:
        client.images.get(tag)
        return tag
    except errors.ImageNotFound:
        pass
    try:
        client.images.build(path=str(context), dockerfile=dockerfile, buildargs=build_args or {}, tag=tag, rm=True)
    except errors.BuildError as exc:
        tail = [str(entry.get("stream", entry.get("error", ""))).strip() for entry in exc.build_log][-10:]
        raise SandboxError(f"docker build of {context} failed: {exc.msg}\n" + "\n".join(t for t in tail if t)) from exc
    except errors.APIError as exc:
        raise SandboxError(f"docker build of {context} failed: {exc}") from exc
    return tag


def pull_task_image(image: str, client=None) -> str:
    """Make sure `image` is present (pulling it when not); returns it."""
    from posttrain.sandbox.docker_backend import _import_docker, connect

    client = client or connect(timeout=600)
    errors = _import_docker().errors
    try:
        client.images.get(image)
        return image
    except errors.ImageNotFound:
        pass
    try:
        client.images.pull(image)
    except errors.APIError as exc:
        raise SandboxError(f"docker_image {image}: cannot pull it: {exc}") from exc
    return image


def image_workdir(image: str, client=None, default: str = "/app") -> str:
    """The image's WORKDIR (its config's WorkingDir), or `default` when it sets none."""
    from posttrain.sandbox.docker_backend import connect

    client = client or connect(timeout=60)
    return client.images.get(image).attrs.get("Config", {}).get("WorkingDir") or default
