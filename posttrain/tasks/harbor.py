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
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from posttrain.errors import PosttrainError
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

    @classmethod
    def from_raw(cls, raw: dict) -> "_Environment":
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
        keys = [k for k in (self.model_extra or {})]
        for name in ("verifier", "agent", "solution", "environment"):
            keys += [f"{name}.{k}" for k in (getattr(self, name).model_extra or {})]
        return sorted(keys)


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
        environment=Environment(dockerfile_dir=str(env_dir) if env_dir.is_dir() else None,
                                allow_network=env.allow_internet),
        verifier=HARBOR_VERIFIER,
        solution=str(solution.parent) if solution.is_file() else None,
        limits=limits,
        metadata=metadata,
    )


def load_harbor_suite(root: Path | str, domain: str | None = None, tags: list[str] | None = None,
                      names: list[str] | None = None) -> list[Task]:
    """Every task directory directly under `root` (sorted by name), optionally only those with
    all of `tags` or with a name in `names`. A directory that fails to load raises."""
    base = Path(root)
    if is_harbor_task(base):
        return [load_harbor_task(base, domain)]
    if not base.is_dir():
        raise HarborTaskError(f"{base}: no such task directory")
    dirs = [d for d in sorted(base.iterdir()) if d.is_dir() and (d / "task.toml").exists()]
    if names:  # only these are loaded: a broken neighbour does not stop them
        unknown = set(names) - {d.name for d in dirs}
        if unknown:
            raise HarborTaskError(f"{base}: no task named {', '.join(sorted(unknown))}")
        dirs = [d for d in dirs if d.name in names]
    tasks = [load_harbor_task(d, domain) for d in dirs]
    if tags:
        tasks = [t for t in tasks if set(tags) <= set(t.metadata.get("tags") or [])]
    if not tasks:
        raise HarborTaskError(f"{base}: no Harbor task directories" + (f" with tags {tags}" if tags else ""))
    return tasks
