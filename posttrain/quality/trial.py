"""One trial of a task: a fresh sandbox from its built environment, an actor's moves, then the
task's verifier, exactly as after an agent episode (the same sandbox factory and verifier).
Everything that happened is kept as evidence: each command, its exit code, timing and output
tail, and what the verifier saw. A trial never raises: a failure is evidence too."""

from __future__ import annotations

import io
import shlex
import tarfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from posttrain.agent.task_sandbox import open_task_sandbox
from posttrain.agent.verifier import run_verifier
from posttrain.sandbox.environment_builder import BuiltEnvironment
from posttrain.sandbox.interface import SandboxError, directory_tar
from posttrain.tasks.records import Task

TAIL = 600
NOT_APPLICABLE = "not_applicable"


@dataclass
class Step:
    command: str
    exit_code: int | None
    duration_s: float
    timed_out: bool = False
    oom_killed: bool = False
    output_tail: str = ""


@dataclass
class Trial:
    name: str
    steps: list[Step] = field(default_factory=list)
    reward: float | None = None
    passed: bool | None = None
    verifier: dict[str, Any] = field(default_factory=dict)
    duration_s: float = 0.0
    error: str | None = None
    applicable: bool = True
    note: str = ""

    @property
    def verifier_error(self) -> str | None:
        return self.verifier.get("error")

    def evidence(self) -> dict[str, Any]:
        data = asdict(self)
        data["duration_s"] = round(self.duration_s, 3)
        for step in data["steps"]:
            step["duration_s"] = round(step["duration_s"], 3)
        return data


class Actor:
    """What the trial's actor may do in the sandbox; every command is recorded."""

    def __init__(self, sandbox, task: Task, workdir: str, trial: Trial) -> None:
        self.sandbox = sandbox
        self.task = task
        self.workdir = workdir
        self.trial = trial

    def run(self, command: str, timeout: float = 60.0, workdir: str | None = None, record: bool = True):
        started = time.perf_counter()
        result = self.sandbox.exec(command, timeout=timeout, workdir=workdir or self.workdir)
        if record:
            output = result.stdout + ("\n" if result.stdout and result.stderr else "") + result.stderr
            self.trial.steps.append(
                Step(
                    command if len(command) < 2000 else command[:2000] + " ...",
                    result.exit_code,
                    time.perf_counter() - started,
                    result.timed_out,
                    result.oom_killed,
                    output[-TAIL:],
                )
            )
        return result

    def run_with_files(self, local_dir: Path, target: str, command: str, timeout: float) -> None:
        """Unpack `local_dir` at `target`, then run `command`: one sandbox command, recorded as
        `command`. The files arrive as a tar on stdin, so `command` gets no stdin."""
        script = (
            f"mkdir -p {shlex.quote(target)} && tar -x -C {shlex.quote(target)} --no-same-owner && "
            f"exec bash -c {shlex.quote(command)} < /dev/null"
        )
        started = time.perf_counter()
        result = self.sandbox.exec(
            ["bash", "-c", script], timeout=timeout, stdin=directory_tar(local_dir), workdir=self.workdir
        )
        output = result.stdout + ("\n" if result.stdout and result.stderr else "") + result.stderr
        self.trial.steps.append(
            Step(
                command,
                result.exit_code,
                time.perf_counter() - started,
                result.timed_out,
                result.oom_killed,
                output[-TAIL:],
            )
        )

    def write(self, path: str, content: str, mode: int = 0o644) -> bool:
        """Write a file; False (recorded) if the sandbox refuses (a read-only directory)."""
        started = time.perf_counter()
        try:
            self.sandbox.write_file(path, content, mode)
            code, tail = 0, ""
        except (SandboxError, OSError) as exc:
            code, tail = 1, str(exc)[-TAIL:]
        self.trial.steps.append(
            Step(f"write {path} ({len(content)} bytes)", code, time.perf_counter() - started, output_tail=tail)
        )
        return code == 0

    def write_many(self, files: dict[str, tuple[str, int]]) -> list[str]:
        """Write several files (path -> (content, mode)) in one command, making parent
        directories; returns the paths the sandbox refused (read-only places)."""
        if not files:
            return []
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            for path, (content, mode) in files.items():
                data = content.encode()
                info = tarfile.TarInfo(path.lstrip("/"))
                info.size, info.mode, info.mtime = len(data), mode, int(time.time())
                tar.addfile(info, io.BytesIO(data))
        started = time.perf_counter()
        result = self.sandbox.exec(
            ["tar", "-x", "-C", "/", "--no-same-owner", "--no-overwrite-dir", "-f", "-"],
            timeout=60,
            stdin=buffer.getvalue(),
            workdir="/",
        )
        refused = [path for path in files if path.lstrip("/") in result.stderr]
        self.trial.steps.append(
            Step(
                f"write {len(files)} files: " + ", ".join(list(files)[:12]) + (" ..." if len(files) > 12 else ""),
                result.exit_code,
                time.perf_counter() - started,
                output_tail=result.stderr[-TAIL:],
            )
        )
        return refused

    def read(self, path: str, limit: int = 200_000) -> str | None:
        try:
            return self.sandbox.read_file(path)[:limit].decode(errors="replace")
        except (FileNotFoundError, SandboxError, OSError):
            return None


ActFn = Callable[[Actor], "str | None"]  # returns NOT_APPLICABLE when there was nothing to try


def run_trial(
    task: Task,
    built: BuiltEnvironment,
    name: str,
    act: ActFn,
    backend: str | None = None,
    verify: bool = True,
    wipe_reward: bool = True,
) -> Trial:
    trial = Trial(name)
    started = time.perf_counter()
    sandbox = None
    try:
        sandbox = open_task_sandbox(task, backend, built)
        outcome = act(Actor(sandbox, task, built.workdir, trial))
        if outcome == NOT_APPLICABLE:
            trial.applicable = False
        elif verify:
            reward = run_verifier(task, sandbox, built.workdir, wipe_reward=wipe_reward)
            trial.reward, trial.passed = reward.value, reward.passed
            trial.verifier = dict(reward.details)
    except Exception as exc:  # noqa: BLE001 - the inspector must survive any task
        trial.error = f"{type(exc).__name__}: {exc}"
    finally:
        if sandbox is not None:
            try:
                sandbox.close()
            except (SandboxError, OSError):
                pass
    trial.duration_s = time.perf_counter() - started
    return trial
