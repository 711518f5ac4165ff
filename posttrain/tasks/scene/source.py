"""`scene:<difficulty>[,<difficulty>...]` as a task source: answer tasks judged by the scene verifier.

Item i is at difficulty difficulties[i % D] with an instance seed drawn from (seed, i); its
reference answer (`Task.answer`, what eval's oracle replies) is the solver's layout, and the
whole SceneTask travels in metadata["scene"] for the verifier."""

from __future__ import annotations

import hashlib

from posttrain.errors import TaskSourceError
from posttrain.tasks.records import Task
from posttrain.tasks.scene.generator import MAX_DIFFICULTY, check_difficulty, generate
from posttrain.tasks.scene.prompt import describe
from posttrain.tasks.scene.schema import SceneTask, compact_json
from posttrain.tasks.scene.solver import solve

PREFIX = "scene:"


def parse_difficulties(spec: str, where: str = "scene") -> list[int]:
    """'2' or '1,3' (what follows scene:) -> [2] or [1, 3], checked."""
    text = spec.removeprefix(PREFIX)
    try:
        levels = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        levels = []
    if not levels:
        raise TaskSourceError(f"{where}: {spec!r} names no difficulty; write e.g. scene:1 or scene:1,2")
    for level in levels:
        try:
            check_difficulty(level)
        except ValueError as exc:
            raise TaskSourceError(f"{where}: {exc}") from None
    return levels


def instance_seed(seed: int, index: int) -> int:
    return int.from_bytes(hashlib.sha256(f"scene:{seed}:{index}".encode()).digest()[:4], "big") >> 1


def scene_task(task: SceneTask, task_id: str, domain: str, prompt_template: str = "{question}", **metadata) -> Task:
    """A SceneTask as the pipeline's Task record."""
    return Task(
        id=task_id,
        domain=domain,
        instruction=prompt_template.format(question=describe(task)),
        verifier="scene",
        answer=compact_json(solve(task)),
        metadata={"scene": task.model_dump(mode="json"), "difficulty": task.difficulty, **metadata},
    )


class SceneSource:
    generator = "scene"  # procedural: a Domain takes its first items as the held-out set

    def __init__(self, domain: str, difficulties: list[int], seed: int, size: int, prompt_template: str = "{question}"):
        if not difficulties:
            raise TaskSourceError(f"domain {domain!r}: scene needs at least one difficulty (1 to {MAX_DIFFICULTY})")
        self.domain = domain
        self.difficulties = list(difficulties)
        self.seed = seed
        self.size = size
        self.prompt_template = prompt_template

    def __len__(self) -> int:
        return self.size

    def scene(self, index: int) -> SceneTask:
        if not 0 <= index < self.size:
            raise IndexError(f"domain {self.domain!r}: index {index} outside 0..{self.size - 1}")
        difficulty = self.difficulties[index % len(self.difficulties)]
        return generate(difficulty, instance_seed(self.seed, index))

    def get(self, index: int) -> Task:
        return scene_task(self.scene(index), f"{self.domain}/{index}", self.domain, self.prompt_template, index=index)


def tasks_from_spec(spec: str) -> list[Task]:
    """`scene:DIFFICULTIES[:COUNT[:SEED]]` (what `posttrain eval --tasks` takes): COUNT tasks
    (default 20) of the source with that seed (default 0), spread over the difficulties."""
    parts = spec.removeprefix(PREFIX).split(":")
    if not spec.startswith(PREFIX) or len(parts) > 3:
        raise TaskSourceError(f"{spec!r}: expected scene:DIFFICULTIES[:COUNT[:SEED]], e.g. scene:1,2:20")
    difficulties = parse_difficulties(parts[0], where=spec)
    try:
        count = int(parts[1]) if len(parts) > 1 else 20
        seed = int(parts[2]) if len(parts) > 2 else 0
    except ValueError:
        raise TaskSourceError(f"{spec!r}: COUNT and SEED are integers") from None
    if count < 1:
        raise TaskSourceError(f"{spec!r}: COUNT must be at least 1")
    source = SceneSource("scene", difficulties, seed=seed, size=count)
    return [source.get(i) for i in range(count)]
