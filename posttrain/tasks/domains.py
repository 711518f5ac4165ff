"""Domains and the mixture a run samples from.

A domain is a named task source with a weight. Its first `heldout` distinct items (in the
source's own order for procedural generators, in a seeded shuffle for files) form the held-out
set; training draws only items whose content is not in it, so the two are disjoint by
construction, duplicates included.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from posttrain.config import CurriculumConfig
from posttrain.curriculum import PassRates, choose_cells
from posttrain.errors import TaskSourceError
from posttrain.tasks.records import Task
from posttrain.tasks.sources import TaskSource, content_key


@dataclass
class Domain:
    name: str
    source: TaskSource
    weight: float
    heldout_size: int
    seed: int
    heldout: list[Task] = field(init=False)
    _order: list[int] = field(init=False)
    _heldout_keys: set[str] = field(init=False)

    def __post_init__(self) -> None:
        order = list(range(len(self.source)))
        if _is_finite_file(self.source):
            random.Random(self.seed).shuffle(order)
        self.heldout, self._heldout_keys = [], set()
        position = 0
        while len(self.heldout) < self.heldout_size and position < len(order):
            task = self.source.get(order[position])
            key = content_key(task)
            if key not in self._heldout_keys:
                self._heldout_keys.add(key)
                self.heldout.append(task)
            position += 1
        if len(self.heldout) < self.heldout_size:
            raise TaskSourceError(
                f"domain {self.name!r}: asked for {self.heldout_size} held-out items but the source has "
                f"only {len(self.heldout)} distinct ones"
            )
        training = order[position:]
        if not training:
            raise TaskSourceError(f"domain {self.name!r}: no items left for training after the held-out split")
        # Training order: a seeded permutation of what is left, so consecutive steps see varied items.
        random.Random(self.seed + 1).shuffle(training)
        self._order = training

    @property
    def training_size(self) -> int:
        """Items a training draw can come from (the source less the held-out prefix)."""
        return len(self._order)

    def cells(self) -> list[tuple[str, int]]:
        """The (family, difficulty) cells of a generated terminal source; [] for other sources."""
        if not hasattr(self.source, "cell"):
            return []
        return sorted({self.source.cell(i) for i in range(min(len(self.source), 10_000))})

    def training_task_in(self, cell: tuple[str, int], cursor: int) -> tuple[Task, int]:
        """Like training_task, within one cell: the next training item of that family and
        difficulty at or after `cursor` (a cursor of the cell's own)."""
        for _ in range(len(self._order)):
            index = self._order[cursor % len(self._order)]
            cursor += 1
            if tuple(self.source.cell(index)) != tuple(cell):
                continue
            task = self.source.get(index)
            if content_key(task) not in self._heldout_keys:
                return task, cursor
        raise TaskSourceError(f"domain {self.name!r}: no training item in cell {cell[0]} difficulty {cell[1]}")

    def training_task(self, cursor: int) -> tuple[Task, int]:
        """The next training task at or after `cursor`, and the cursor after it. Items whose
        content equals a held-out item are skipped; the pool wraps around (a new epoch)."""
        for _ in range(len(self._order)):
            task = self.source.get(self._order[cursor % len(self._order)])
            cursor += 1
            if content_key(task) not in self._heldout_keys:
                return task, cursor
        raise TaskSourceError(f"domain {self.name!r}: every training item duplicates a held-out item")


def _is_finite_file(source: TaskSource) -> bool:
    return not hasattr(source, "generator")


class DomainMixture:
    """Draws prompts for each step: a domain per slot by weight, then that domain's next item.
    With a curriculum, a generated terminal domain's slots first pick a (family, difficulty)
    cell by its estimated pass rate (posttrain.curriculum), then that cell's next item; `observe`
    feeds the step's outcomes back. The state (cursors, pass rates) is saved with checkpoints
    so a resumed run continues the same stream."""

    def __init__(self, domains: list[Domain], seed: int, curriculum: CurriculumConfig | None = None) -> None:
        if not domains:
            raise TaskSourceError("a run needs at least one domain")
        self.domains = {d.name: d for d in domains}
        self.seed = seed
        self.cursors = {d.name: 0 for d in domains}
        self.curriculum = curriculum if curriculum is not None and curriculum.enabled else None
        self.cells = {d.name: d.cells() for d in domains} if self.curriculum else {}
        self.cell_cursors: dict[str, int] = {}
        self.rates = {
            name: PassRates(self.curriculum.window, self.curriculum.min_episodes)
            for name, cells in self.cells.items()
            if cells
        }

    def sample_step(self, step: int, n_prompts: int) -> list[Task]:
        rng = random.Random(f"{self.seed}:{step}")
        names = list(self.domains)
        weights = [self.domains[n].weight for n in names]
        slots = rng.choices(names, weights=weights, k=n_prompts)
        planned = {
            name: choose_cells(
                self.cells[name], self.rates[name], slots.count(name), step, rng, self.curriculum.reprobe_every
            )
            for name in self.rates
            if name in slots
        }
        tasks = []
        for name in slots:
            if name in planned:
                cell = planned[name].pop(0)
                key = f"{name}/{cell[0]}/d{cell[1]}"
                task, self.cell_cursors[key] = self.domains[name].training_task_in(cell, self.cell_cursors.get(key, 0))
                self.rates[name].drawn(cell, step)
            else:
                task, self.cursors[name] = self.domains[name].training_task(self.cursors[name])
            tasks.append(task)
        return tasks

    def observe(self, groups) -> dict[str, float]:
        """Feed a step's groups (each with .task and .rewards) to the curriculum; returns its
        pass-rate estimates per family and difficulty for the step's metrics ({} without one)."""
        if not self.rates:
            return {}
        for group in groups:
            task = group.task
            rates = self.rates.get(task.domain)
            family, difficulty = task.metadata.get("family"), task.metadata.get("difficulty")
            if rates is not None and family is not None and difficulty is not None:
                rates.add((family, int(difficulty)), [r.passed for r in group.rewards])
        metrics = {}
        for name, rates in self.rates.items():
            prefix = "curriculum" if len(self.rates) == 1 else f"curriculum/{name}"
            metrics.update(rates.metrics(prefix))
        return metrics

    def heldout(self) -> list[Task]:
        return [task for d in self.domains.values() for task in d.heldout]

    def state_dict(self) -> dict:
        return {
            "cursors": dict(self.cursors),
            "cell_cursors": dict(self.cell_cursors),
            "pass_rates": {name: rates.state_dict() for name, rates in self.rates.items()},
        }

    def load_state_dict(self, state: dict) -> None:
        unknown = set(state["cursors"]) - set(self.cursors)
        if unknown:
            raise TaskSourceError(f"checkpoint names domains not in the config: {sorted(unknown)}")
        self.cursors.update(state["cursors"])
        self.cell_cursors.update(state.get("cell_cursors", {}))
        for name, rates in state.get("pass_rates", {}).items():
            if name in self.rates:
                self.rates[name].load_state_dict(rates)
