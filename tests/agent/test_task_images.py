"""A task's `docker_image` and Dockerfile per backend. Under bwrap (what runs here) a task whose
image the host cannot stand in for is refused with an error naming the image, in the function
and in a real `posttrain eval`; one the host can stand in for runs. Under docker the engine
builds the Dockerfile (build args included) or pulls the image: those tests need a Docker
engine, which this machine does not have, and skip saying so."""

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from posttrain.agent.task_sandbox import build_task_environment
from posttrain.cli import app
from posttrain.sandbox.docker_backend import docker_available
from posttrain.sandbox.docker_images import build_task_image, image_tag
from posttrain.sandbox.interface import SandboxError
from posttrain.tasks.harbor import load_harbor_task
from posttrain.tasks.records import Environment

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "tasks" / "terminal" / "count-lines"


def task_with_image(directory: Path, image: str) -> Path:
    """count-lines, its task.toml naming `image` as its environment.docker_image."""
    root = directory / "count-lines"
    shutil.copytree(TASK, root)
    toml = (root / "task.toml").read_text().replace("[environment]\n", f'[environment]\ndocker_image = "{image}"\n')
    (root / "task.toml").write_text(toml)
    return root


def test_bwrap_refuses_an_image_the_host_cannot_stand_in_for(tmp_path):
    task = load_harbor_task(task_with_image(tmp_path, "alpine:3.19"))
    with pytest.raises(SandboxError) as caught:
        build_task_environment(task, "bwrap")
    message = str(caught.value)
    assert "environment.docker_image 'alpine:3.19'" in message and "--backend docker" in message
    assert message.startswith("task count-lines: ")


def test_bwrap_runs_an_image_the_host_stands_in_for(tmp_path):
    task = load_harbor_task(task_with_image(tmp_path, "debian:bookworm-slim"))
    built = build_task_environment(task, "bwrap")
    assert built.layers and built.image is None  # the Dockerfile's steps, built on the host


def test_eval_reports_the_refused_image_as_the_tasks_environment_error(tmp_path):
    task_with_image(tmp_path / "suite", "mcr.microsoft.com/dotnet/sdk:8.0")
    out = tmp_path / "out"
    args = ["eval", "--tasks", str(tmp_path / "suite"), "--agent", "oracle", "--out", str(out), "--concurrency", "1"]
    result = CliRunner().invoke(app, args)
    assert (out / "summary.json").is_file(), result.output[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["pass_at_1"] == 0.0 and sum(summary["failure_modes"].values()) == 1
    found = "".join(p.read_text(errors="replace") for p in out.rglob("*.json*"))
    assert "environment.docker_image 'mcr.microsoft.com/dotnet/sdk:8.0'" in found and "--backend docker" in found


def test_a_built_images_tag_follows_its_inputs(tmp_path):
    (tmp_path / "Dockerfile").write_text("ARG VERSION=1\nFROM debian:bookworm-slim\nCOPY a.txt /app/\n")
    (tmp_path / "a.txt").write_text("one")
    first = image_tag(tmp_path)
    assert first.startswith("posttrain-env:") and image_tag(tmp_path) == first
    assert image_tag(tmp_path, build_args={"VERSION": "2"}) != first
    (tmp_path / "a.txt").write_text("two")
    assert image_tag(tmp_path) != first
    with pytest.raises(SandboxError, match="no Dockerfile to build"):
        build_task_image(tmp_path / "absent")


ENGINE, WHY_NOT = docker_available()
needs_docker = pytest.mark.skipif(not ENGINE, reason=f"no Docker engine on this machine: {WHY_NOT}")


@needs_docker
def test_docker_builds_the_dockerfile_with_build_args_and_runs_in_that_image(tmp_path):
    from posttrain.agent.task_sandbox import open_task_sandbox

    context = tmp_path / "environment"
    context.mkdir()
    (context / "Dockerfile").write_text(
        "FROM debian:bookworm-slim\nARG GREETING=hello\nRUN echo $GREETING > /greeting\nWORKDIR /app\n"
    )
    tag = build_task_image(context, {"GREETING": "built-by-docker"})
    assert build_task_image(context, {"GREETING": "built-by-docker"}) == tag  # found again, not rebuilt
    task = load_harbor_task(TASK).model_copy(update={"environment": Environment(dockerfile_dir=str(context))})
    sandbox = open_task_sandbox(task, "docker")
    try:
        assert sandbox.exec("cat /greeting").stdout.strip() == "built-by-docker"
    finally:
        sandbox.close()


@needs_docker
def test_docker_pulls_a_tasks_image_and_uses_it_as_it_is(tmp_path):
    from posttrain.agent.task_sandbox import open_task_sandbox

    sandbox = open_task_sandbox(load_harbor_task(task_with_image(tmp_path, "alpine:3.19")), "docker")
    try:
        assert "Alpine" in sandbox.exec("cat /etc/os-release").stdout
    finally:
        sandbox.close()
