"""`terminal-gen:<family>[,<family>...]` (or `terminal-gen:all`) as a task source.

Item i is family families[i % F] at difficulty difficulties[(i // F) % D], with an instance
seed drawn from (seed, i), so every (family, difficulty) cell recurs through the index space.
A task directory is written once per content under the machine's cache and loaded from there.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from posttrain.cache import cache_dir as machine_cache_dir
from posttrain.errors import TaskSourceError
from posttrain.tasks.harbor import load_harbor_task
from posttrain.tasks.records import Task
from posttrain.tasks.terminal_gen.generated_task import GeneratedTask
from posttrain.tasks.terminal_gen.registry import check_difficulty, check_family, generate
from posttrain.tasks.terminal_gen.task_directory import write_task


def instance_seed(seed: int, index: int) -> int:
    return int.from_bytes(hashlib.sha256(f"terminal-gen:{seed}:{index}".encode()).digest()[:4], "big") >> 1


class TerminalGenSource:
    generator = "terminal-gen"  # procedural: a Domain takes its first items as the held-out set

    def __init__(
        self,
        domain: str,
        families: list[str],
        difficulties: list[int],
        seed: int,
        size: int,
        cache_dir: Path | None = None,
    ) -> None:
        if not families or not difficulties:
            raise TaskSourceError(f"domain {domain!r}: terminal-gen needs at least one family and one difficulty")
        for family in families:
            check_family(family, domain)
        for difficulty in difficulties:
            check_difficulty(difficulty, domain)
        self.domain = domain
        self.families = list(families)
        self.difficulties = list(difficulties)
        self.seed = seed
        self.size = size
        self.cache_dir = Path(cache_dir) if cache_dir is not None else machine_cache_dir() / "terminal-gen"

    def __len__(self) -> int:
        return self.size

    def cell(self, index: int) -> tuple[str, int]:
        f = len(self.families)
        return self.families[index % f], self.difficulties[(index // f) % len(self.difficulties)]

    def generated(self, index: int) -> GeneratedTask:
        if not 0 <= index < self.size:
            raise IndexError(f"domain {self.domain!r}: index {index} outside 0..{self.size - 1}")
        family, difficulty = self.cell(index)
        return generate(family, difficulty, instance_seed(self.seed, index))

    def get(self, index: int) -> Task:
        generated = self.generated(index)
        digest = generated.content_digest()
        # one directory per content: a changed generator writes anew instead of reusing a stale copy
        directory = self.cache_dir / digest / generated.name
        if not (directory / "task.toml").is_file():
            write_task(generated, directory.parent, replace=False)
        task = load_harbor_task(directory, self.domain)
        task.metadata.update(
            family=generated.family,
            difficulty=generated.difficulty,
            reference_steps=list(generated.steps),
            content_digest=digest,
            index=index,
        )
        return task
