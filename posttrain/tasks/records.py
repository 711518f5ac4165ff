"""The core task records of DESIGN.md: Task, Environment, Limits, Reward."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Limits(BaseModel):
    """Resource and time limits for one attempt at a task."""

    model_config = ConfigDict(extra="forbid")

    agent_timeout_s: float = 600.0
    verifier_timeout_s: float = 120.0
    max_steps: int = 50
    cpus: float = 1.0
    memory_mb: int = 2048


class Environment(BaseModel):
    """Where a terminal task runs: files, set-up commands, workdir, env vars, network policy."""

    model_config = ConfigDict(extra="forbid")

    files: dict[str, str] = Field(default_factory=dict)
    setup: list[str] = Field(default_factory=list)
    workdir: str = "/app"
    env: dict[str, str] = Field(default_factory=dict)
    allow_network: bool = False
    dockerfile_dir: str | None = None  # a Harbor task's environment/: built from its Dockerfile instead


class Reward(BaseModel):
    """What a verifier concluded about one completion or episode."""

    model_config = ConfigDict(extra="forbid")

    value: float
    passed: bool
    details: dict[str, Any] = Field(default_factory=dict)


class Task(BaseModel):
    """One verifiable task. `answer` tasks are judged on a single reply; `terminal` tasks are
    multi-step agent episodes in a sandbox."""

    model_config = ConfigDict(extra="forbid")

    id: str
    domain: str
    instruction: str | list[dict[str, str]]
    kind: Literal["answer", "terminal"] = "answer"
    environment: Environment | None = None
    verifier: str
    answer: Any = None
    solution: str | None = None
    limits: Limits = Field(default_factory=Limits)
    metadata: dict[str, Any] = Field(default_factory=dict)

    def messages(self, system_prompt: str | None = None) -> list[dict[str, str]]:
        """The instruction as chat messages, with an optional system prompt in front."""
        if isinstance(self.instruction, str):
            messages = [{"role": "user", "content": self.instruction}]
        else:
            messages = [dict(m) for m in self.instruction]
        if system_prompt and messages[0].get("role") != "system":
            messages.insert(0, {"role": "system", "content": system_prompt})
        return messages
