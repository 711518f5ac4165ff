"""Static lint of a task directory: problems readable from its files alone. Lint findings are
warnings in the report; the execution checks and probes decide the verdict.

    tests_in_image       tests or the solution copied into the environment image
    verifier_downloads   test.sh fetches things at run time
    unpinned_dependencies  FROM without a tag or :latest, pip/npm installs without a version
    outputs_not_named    the tests check output paths the instruction never names
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from posttrain.quality.dockerfiles import run_commands, task_dockerfile
from posttrain.quality.execution import uses_network
from posttrain.quality.install_commands import installed_packages
from posttrain.quality.task_paths import checked_paths, instruction_paths
from posttrain.quality.verdicts import PASS, WARN, Check
from posttrain.sandbox.dockerfile import Dockerfile
from posttrain.tasks.records import Task

_HIDDEN = re.compile(r"(^|/)(tests?|solution|solve\.sh)(/|$)")  # a path that names the tests or the solution


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _files(directory: Path | None) -> list[Path]:
    if directory is None or not directory.is_dir():
        return []
    return [f for f in directory.rglob("*") if f.is_file() and f.stat().st_size < 5_000_000]


def tests_in_image(task: Task, env_dir: Path | None, dockerfile: Dockerfile | None) -> list[str]:
    """COPY/ADD steps that name the tests or the solution, and environment files that are copies of theirs."""
    findings = []
    for step in dockerfile.instructions if dockerfile else []:
        if step.keyword in ("COPY", "ADD") and any(
            _HIDDEN.search(p) for p in [*(s.path for s in step.sources), step.dest]
        ):
            findings.append(f"Dockerfile: {step.text.splitlines()[0]}")
    hidden = {
        _digest(f): f"tests/{f.relative_to(Path(task.metadata['tests_dir']))}"
        for f in _files(Path(task.metadata.get("tests_dir", "")))
    }
    if task.solution:
        hidden.update(
            {_digest(f): f"solution/{f.relative_to(Path(task.solution))}" for f in _files(Path(task.solution))}
        )
    for file in _files(env_dir):
        origin = hidden.get(_digest(file))
        if origin and file.stat().st_size > 0:
            findings.append(f"environment/{file.relative_to(env_dir)} is a copy of {origin}")
    return findings


def unpinned(dockerfile: Dockerfile | None, test_sh: str) -> list[str]:
    """Base images without a tag (or :latest), and the pip and npm packages the Dockerfile's
    RUN steps or test.sh install without a pinned version."""
    findings = []
    for image in dockerfile.images if dockerfile else []:
        name = image.split("@")[0]
        if "@sha256:" not in image and (":" not in name.rsplit("/", 1)[-1] or name.endswith(":latest")):
            if image.lower() != "scratch":
                findings.append(f"FROM {image}: no tag (or :latest)")
    commands = [
        *(("Dockerfile", run) for run in run_commands(dockerfile)),
        ("tests/test.sh", re.sub(r"\\\n", " ", test_sh)),
    ]
    for source, command in commands:
        for manager in ("pip", "npm"):
            for package in installed_packages(command, manager):
                if not re.search(r"==|@\d|===", package):
                    findings.append(f"{source}: {package} has no pinned version")
    return list(dict.fromkeys(findings))


def outputs_not_named(task: Task, instruction: str) -> tuple[list[str], list[str]]:
    """(paths the tests check that the instruction never names, the paths it does name)."""
    workdir = task.environment.workdir if task.environment else "/app"
    named = instruction_paths(instruction, workdir)
    named_names = {p.rstrip("/").rsplit("/", 1)[-1] for p in named}
    checked = checked_paths(task.metadata.get("tests_dir", ""))
    missing = [
        p
        for p in checked
        if p not in named
        and p.rstrip("/").rsplit("/", 1)[-1] not in named_names
        and not any(p.startswith(n.rstrip("/") + "/") for n in named)
    ]
    return missing, named


def lint_task(task: Task) -> list[Check]:
    env_dir = Path(task.environment.dockerfile_dir) if task.environment and task.environment.dockerfile_dir else None
    dockerfile = task_dockerfile(task)
    test_sh_path = Path(task.metadata.get("tests_dir", "")) / "test.sh"
    test_sh = test_sh_path.read_text(errors="replace") if test_sh_path.is_file() else ""
    instruction = (
        task.instruction
        if isinstance(task.instruction, str)
        else "\n".join(m.get("content", "") for m in task.instruction)
    )
    checks = []
    copied = tests_in_image(task, env_dir, dockerfile)
    checks.append(
        Check(
            "tests_in_image",
            "lint",
            WARN if copied else PASS,
            "tests or solution copied into the environment image" if copied else "none found",
            evidence={"findings": copied},
        )
    )
    downloads = uses_network(test_sh)
    checks.append(
        Check(
            "verifier_downloads",
            "lint",
            WARN if downloads else PASS,
            "test.sh downloads at run time" if downloads else "none found",
            evidence={"lines": downloads},
        )
    )
    loose = unpinned(dockerfile, test_sh)
    checks.append(
        Check(
            "unpinned_dependencies",
            "lint",
            WARN if loose else PASS,
            f"{len(loose)} unpinned" if loose else "all pinned",
            evidence={"findings": loose},
        )
    )
    missing, named = outputs_not_named(task, instruction)
    checked_any = bool(checked_paths(task.metadata.get("tests_dir", "")))
    never = checked_any and len(missing) == len(checked_paths(task.metadata.get("tests_dir", "")))
    checks.append(
        Check(
            "outputs_named",
            "lint",
            WARN if never else PASS,
            "the instruction names none of the paths the tests check"
            if never
            else ("every checked path is named" if not missing else f"{len(missing)} checked paths not named"),
            evidence={"checked_not_named": missing, "named": named},
        )
    )
    return checks
