"""Harbor / Terminal-Bench task directories as `Task` records.

    my-task/
      task.toml          version, [metadata], [verifier] timeout_sec + env, [agent] timeout_sec,
                         [environment] cpus, memory_mb (or memory = "2G"), storage_mb, allow_internet
      instruction.md     what the agent is told
      environment/       Dockerfile and its build context
      tests/test.sh      the verifier: copied in only after the agent stops; writes
                         /logs/verifier/reward.txt (a float) or reward.json
      solution/solve.sh  the reference solution (optional)

Keys this loader does not know are kept in `metadata["unknown_keys"]`, as Harbor ignores them;
a missing file, or a known key with a wrong type, is an error naming the file and the key.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from posttrain.errors import PosttrainError, did_you_mean
from posttrain.tasks.records import Environment, Limits, Task

HARBOR_VERIFIER = "harbor"
REQUIRED_FILES = ("task.toml", "instruction.md", "tests/test.sh")


class HarborTaskError(PosttrainError):
    """A task directory that does not load: the message starts with the file (and key)."""


def _size_mb(value: Any) -> Any:
    """'2G', '512M', '1024' or a number of MB -> MB."""
    if isinstance(value, str):
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\s*", value, re.IGNORECASE)
        if not match:
            raise ValueError(f"not a size: {value!r} (use e.g. 512M or 2G)")
        number, unit = float(match.group(1)), match.group(2).upper()
        return int(number * {"": 1, "K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}[unit])
    return value


class _Section(BaseModel):
    model_config = ConfigDict(extra="allow")


class _Verifier(_Section):
    timeout_sec: float = Field(default=120.0, gt=0)
    env: dict[str, str] = Field(default_factory=dict)


class _Agent(_Section):
    timeout_sec: float = Field(default=600.0, gt=0)
    max_steps: int | None = Field(default=None, gt=0)


class _Solution(_Section):
    env: dict[str, str] = Field(default_factory=dict)


class _Environment(_Section):
    build_timeout_sec: float = Field(default=600.0, gt=0)
    docker_image: str | None = None
    cpus: float = Field(default=1.0, gt=0)
    memory_mb: int = Field(default=2048, gt=0)
    storage_mb: int = Field(default=10240, gt=0)
    allow_internet: bool = True  # Harbor's default
    gpus: int = Field(default=0, ge=0)  # Harbor's; no sandbox here has a GPU, so a task needing one is refused
    gpu_types: list[str] | None = None

    @classmethod
    def from_raw(cls, raw: dict) -> _Environment:
        raw = dict(raw)
        for old, new in (("memory", "memory_mb"), ("storage", "storage_mb")):  # Harbor's older spellings
            if old in raw and new not in raw:
                raw[new] = raw.pop(old)
        return cls.model_validate(raw)

    @field_validator("memory_mb", "storage_mb", mode="before")
    @classmethod
    def _sizes(cls, value: Any) -> Any:
        return _size_mb(value)


class HarborTaskConfig(BaseModel):
    model_config = ConfigDict(extra="allow")

    version: str = "1.0"
    metadata: dict[str, Any] = Field(default_factory=dict)
    verifier: _Verifier = Field(default_factory=_Verifier)
    agent: _Agent = Field(default_factory=_Agent)
    solution: _Solution = Field(default_factory=_Solution)
    environment: _Environment = Field(default_factory=_Environment)

    @field_validator("environment", mode="before")
    @classmethod
    def _environment(cls, value: Any) -> Any:
        return _Environment.from_raw(value) if isinstance(value, dict) else value

    def unknown_keys(self) -> list[str]:
        """Keys Harbor would ignore, each with the known key it most resembles (a typo like
        memroy_mb would otherwise silently leave the default in force)."""
        found = [_with_suggestion(k, type(self).model_fields) for k in (self.model_extra or {})]
        for name in ("verifier", "agent", "solution", "environment"):
            section = getattr(self, name)
            known = {**type(section).model_fields, **({"memory": 0, "storage": 0} if name == "environment" else {})}
            found += [f"{name}.{_with_suggestion(k, known)}" for k in (section.model_extra or {})]
        return sorted(found)


def _with_suggestion(key: str, known) -> str:
    return key + did_you_mean(key, known, cutoff=0.75)


def unknown_key_warnings(tasks: list[Task]) -> list[str]:
    """One line per task whose task.toml has keys this loader (and Harbor) would ignore."""
    return [
        f"{Path(t.metadata['task_dir']) / 'task.toml'}: unknown key {', '.join(t.metadata['unknown_keys'])}; "
        "it is ignored, so the default applies"
        for t in tasks
        if t.metadata.get("unknown_keys")
    ]


def is_harbor_task(path: Path) -> bool:
    return (path / "task.toml").is_file() and (path / "instruction.md").is_file()


def load_harbor_task(path: Path | str, domain: str | None = None) -> Task:
    """One task directory -> a `kind="terminal"` Task. Raises HarborTaskError."""
    root = Path(path).resolve()
    if not root.is_dir():
        raise HarborTaskError(f"{root}: not a task directory")
    for name in REQUIRED_FILES:
        if not (root / name).is_file():
            raise HarborTaskError(f"{root / name}: missing (a Harbor task needs {', '.join(REQUIRED_FILES)})")
    toml_path = root / "task.toml"
    try:
        raw = tomllib.loads(toml_path.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise HarborTaskError(f"{toml_path}: not valid TOML: {exc}") from exc
    try:
        config = HarborTaskConfig.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise HarborTaskError(f"{toml_path}: {where}: {first['msg']}") from exc
    if config.environment.gpus:
        raise HarborTaskError(
            f"{toml_path}: environment.gpus: the task needs {config.environment.gpus} GPU(s); "
            "posttrain's sandboxes have none"
        )
    instruction = (root / "instruction.md").read_text().strip()
    if not instruction:
        raise HarborTaskError(f"{root / 'instruction.md'}: empty")
    env_dir = root / "environment"
    if not env_dir.is_dir() and not config.environment.docker_image:
        raise HarborTaskError(f"{env_dir}: missing (and task.toml has no environment.docker_image)")
    solution = root / "solution" / "solve.sh"
    env = config.environment
    metadata = dict(config.metadata)
    metadata.update(
        task_dir=str(root),
        tests_dir=str(root / "tests"),
        verifier_env=dict(config.verifier.env),
        solution_env=dict(config.solution.env),
        storage_mb=env.storage_mb,
        build_timeout_s=env.build_timeout_sec,
        docker_image=env.docker_image,
        harbor_version=config.version,
    )
    if config.unknown_keys():
        metadata["unknown_keys"] = config.unknown_keys()
    limits = Limits(
        agent_timeout_s=config.agent.timeout_sec,
        verifier_timeout_s=config.verifier.timeout_sec,
        cpus=env.cpus,
        memory_mb=env.memory_mb,
        **({"max_steps": config.agent.max_steps} if config.agent.max_steps else {}),
    )
    return Task(
        id=root.name,
        domain=domain or str(metadata.get("category") or "terminal"),
        instruction=instruction,
        kind="terminal",
        environment=Environment(
            dockerfile_dir=str(env_dir) if env_dir.is_dir() else None, allow_network=env.allow_internet
        ),
        verifier=HARBOR_VERIFIER,
        solution=str(solution.parent) if solution.is_file() else None,
        limits=limits,
        metadata=metadata,
    )


TASK_MARKERS = ("task.toml", "instruction.md", "tests")  # a directory with any of these is meant as a task


@dataclass(frozen=True)
class InvalidTask:
    """A task directory that does not load, and why (the loader's message: file, key, reason)."""

    name: str
    reason: str


@dataclass
class SuiteScan:
    tasks: list[Task]
    invalid: list[InvalidTask]


def scan_harbor_suite(
    root: Path | str, domain: str | None = None, tags: list[str] | None = None, names: list[str] | None = None
) -> SuiteScan:
    """Every task directory directly under `root` (sorted by name; one that has task.toml,
    instruction.md or tests/), optionally only those with all of `tags` or with a name in
    `names`. A directory that fails to load is listed in `invalid` with its reason instead of
    stopping the others; one whose task.toml does not parse is kept there even under `tags`."""
    base = Path(root)
    if is_harbor_task(base):
        return SuiteScan([load_harbor_task(base, domain)], [])
    if not base.is_dir():
        raise HarborTaskError(f"{base}: no such task directory")
    dirs = [d for d in sorted(base.iterdir()) if d.is_dir() and any((d / m).exists() for m in TASK_MARKERS)]
    if names:  # only these are loaded: a broken neighbour does not stop them
        unknown = set(names) - {d.name for d in dirs}
        if unknown:
            raise HarborTaskError(f"{base}: no task named {', '.join(sorted(unknown))}")
        dirs = [d for d in dirs if d.name in names]
    scan = SuiteScan([], [])
    for directory in dirs:
        try:
            task = load_harbor_task(directory, domain)
        except HarborTaskError as exc:
            declared = _declared_tags(directory) if tags else None
            if not tags or declared is None or set(tags) <= declared:
                scan.invalid.append(InvalidTask(directory.name, str(exc)))
            continue
        if not tags or set(tags) <= set(task.metadata.get("tags") or []):
            scan.tasks.append(task)
    if not scan.tasks and not scan.invalid:
        raise HarborTaskError(f"{base}: no Harbor task directories" + (f" with tags {tags}" if tags else ""))
    return scan


def _declared_tags(directory: Path) -> set[str] | None:
    """The tags a task.toml declares; None when it cannot be read."""
    try:
        return set(tomllib.loads((directory / "task.toml").read_text()).get("metadata", {}).get("tags") or [])
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
        return None


def load_harbor_suite(
    root: Path | str, domain: str | None = None, tags: list[str] | None = None, names: list[str] | None = None
) -> list[Task]:
    """Like scan_harbor_suite, but a directory that fails to load raises (training's domains)."""
    scan = scan_harbor_suite(root, domain, tags, names)
    if scan.invalid:
        first = scan.invalid[0]
        more = f" ({len(scan.invalid) - 1} more task directories fail too)" if len(scan.invalid) > 1 else ""
        raise HarborTaskError(f"{first.reason}{more}; `posttrain inspect` lists every one and why")
    return scan.tasks
