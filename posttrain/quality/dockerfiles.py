"""A task's Dockerfile as the quality checks read it: the instructions `sandbox.dockerfile`
parses (continuations, heredocs, flags and variables as Docker reads them), not regexes over
its text. Read as a reader, not as the bwrap builder: a Dockerfile only the docker backend can
build (several stages, RUN --mount) is read all the same."""

from __future__ import annotations

import shlex
from pathlib import Path

from posttrain.sandbox.dockerfile import Dockerfile, DockerfileError, read_dockerfile


def parsed_dockerfile(path: Path) -> Dockerfile | None:
    """The Dockerfile at `path`; None when there is none, or Docker could not read it either
    (the environment build reports that)."""
    if not path.is_file():
        return None
    try:
        return read_dockerfile(path)
    except DockerfileError:
        return None


def task_dockerfile(task) -> Dockerfile | None:
    """The task's environment/Dockerfile, parsed; None as for `parsed_dockerfile`."""
    env_dir = task.environment.dockerfile_dir if task.environment else None
    return parsed_dockerfile(Path(env_dir) / "Dockerfile") if env_dir else None


def run_commands(dockerfile: Dockerfile | None) -> list[str]:
    """The shell text of its RUN steps, in order: an exec form joined into one line, a script
    fed on stdin (`RUN <<EOF` with a #! line) as its body."""
    if dockerfile is None:
        return []
    return [
        step.stdin or (step.command if isinstance(step.command, str) else shlex.join(step.command))
        for step in dockerfile.instructions
        if step.keyword == "RUN"
    ]
