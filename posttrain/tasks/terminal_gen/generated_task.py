"""The records of a generated terminal task: what a family builds (`TaskParts`), the finished
task (`GeneratedTask`) and the family itself (`Family`)."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from posttrain.errors import TaskSourceError

DIFFICULTIES = (1, 2, 3)
# the reference solution's length per difficulty: one command, a short pipeline, a few steps
MAX_STEPS = {1: 1, 2: 2, 3: 4}


@dataclass(frozen=True)
class TaskParts:
    """What a family's builder returns for one instance; `files` are paths under /app."""

    instruction: str
    files: dict[str, str]
    tests: str
    steps: list[str]
    setup: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class GeneratedTask:
    family: str
    difficulty: int
    seed: int
    name: str  # directory name, e.g. "text-processing-d1-s17"
    instruction: str
    files: dict[str, str]  # environment files (path relative to /app) -> content
    tests: str  # content of tests/test_outputs.py
    steps: list[str]  # reference solution, one bash command per tool call
    setup: list[str]  # extra Dockerfile RUN lines (may be empty)

    def content_digest(self) -> str:
        """Identity of what the agent faces and what is checked: equal digests, the same task."""
        payload = json.dumps([self.instruction, self.files, self.tests, self.setup], sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:24]


@dataclass(frozen=True)
class Family:
    name: str
    skill: str
    levels: tuple[str, str, str]  # what difficulty 1, 2 and 3 ask for
    build: Callable[[int, random.Random], TaskParts]

    def generate(self, difficulty: int, rng_or_seed: random.Random | int) -> GeneratedTask:
        if difficulty not in DIFFICULTIES:
            raise TaskSourceError(f"terminal-gen: difficulty {difficulty!r} is not one of 1, 2, 3")
        seed = rng_or_seed if isinstance(rng_or_seed, int) else rng_or_seed.randrange(2**31)
        parts = self.build(difficulty, random.Random(f"{self.name}:{difficulty}:{seed}"))
        if not 1 <= len(parts.steps) <= MAX_STEPS[difficulty] or any("\n" in s for s in parts.steps + parts.setup):
            raise AssertionError(
                f"{self.name} d{difficulty}: the solution must be 1..{MAX_STEPS[difficulty]} one-line steps, "
                "and each setup command one line"
            )
        return GeneratedTask(
            family=self.name,
            difficulty=difficulty,
            seed=seed,
            name=f"{self.name}-d{difficulty}-s{seed}",
            instruction=parts.instruction,
            files=dict(parts.files),
            tests=parts.tests,
            steps=list(parts.steps),
            setup=list(parts.setup),
        )
