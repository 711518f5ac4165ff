"""`terminal-gen:<family>[,<family>...]` (or `terminal-gen:all`) as a task source.

Item i is family families[i % F] at difficulty difficulties[(i // F) % D], with an instance
seed drawn from (seed, i), so every (family, difficulty) cell recurs through the index space.
With `templates` (ids), only those templates are drawn, and only the cells that hold one
recur; without, the instance seed picks among all of a cell's templates. A task directory is
written once per content under the machine's cache and loaded from there.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from posttrain.cache import cache_dir as machine_cache_dir
from posttrain.errors import TaskSourceError
from posttrain.tasks.harbor import load_harbor_task
from posttrain.tasks.records import Task
from posttrain.tasks.terminal_gen.generated_task import GeneratedTask
from posttrain.tasks.terminal_gen.registry import FAMILIES, check_difficulty, check_family, generate
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
        templates: list[str] | None = None,
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
        # per cell, the templates to draw from (None: every template of the cell, drawn by the seed)
        allowed: dict[tuple[str, int], list[str] | None] = {}
        for difficulty in self.difficulties:
            for family in self.families:
                cell = FAMILIES[family].template_ids(difficulty)
                chosen = cell if templates is None else [t for t in cell if t in set(templates)]
                if chosen:
                    allowed[(family, difficulty)] = None if chosen == cell else chosen
        if not allowed:
            raise TaskSourceError(f"domain {domain!r}: terminal-gen: no template of its families and difficulties")
        self.templates = allowed
        self.cells = list(allowed)

    def __len__(self) -> int:
        return self.size

    def cell(self, index: int) -> tuple[str, int]:
        return self.cells[index % len(self.cells)]

    def template_ids(self) -> list[str]:
        """Every template this source draws from."""
        return [
            t
            for (family, difficulty), chosen in self.templates.items()
            for t in (chosen or FAMILIES[family].template_ids(difficulty))
        ]

    def generated(self, index: int) -> GeneratedTask:
        if not 0 <= index < self.size:
            raise IndexError(f"domain {self.domain!r}: index {index} outside 0..{self.size - 1}")
        family, difficulty = self.cell(index)
        seed = instance_seed(self.seed, index)
        chosen = self.templates[(family, difficulty)]
        template = chosen[instance_seed(seed, -1) % len(chosen)] if chosen else None
        return generate(family, difficulty, seed, template=template)

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
            template=generated.template,
            wording=generated.wording,
            reference_steps=list(generated.steps),
            root=generated.root,
            content_digest=digest,
            index=index,
        )
        return task
