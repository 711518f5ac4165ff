"""Domains and the mixture a run samples from.

A domain is a named task source with a weight. Its first `heldout` distinct items (in the
source's own order for procedural generators, in a seeded shuffle for files) form the held-out
set; training draws only items whose content is not in it, so the two are disjoint by
construction, duplicates included.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

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
    The state (`cursors`) is saved with checkpoints so a resumed run continues the same stream."""

    def __init__(self, domains: list[Domain], seed: int) -> None:
        if not domains:
            raise TaskSourceError("a run needs at least one domain")
        self.domains = {d.name: d for d in domains}
        self.seed = seed
        self.cursors = {d.name: 0 for d in domains}

    def sample_step(self, step: int, n_prompts: int) -> list[Task]:
        rng = random.Random(f"{self.seed}:{step}")
        names = list(self.domains)
        weights = [self.domains[n].weight for n in names]
        tasks = []
        for name in rng.choices(names, weights=weights, k=n_prompts):
            task, self.cursors[name] = self.domains[name].training_task(self.cursors[name])
            tasks.append(task)
        return tasks

    def heldout(self) -> list[Task]:
        return [task for d in self.domains.values() for task in d.heldout]

    def state_dict(self) -> dict:
        return {"cursors": dict(self.cursors)}

    def load_state_dict(self, state: dict) -> None:
        unknown = set(state["cursors"]) - set(self.cursors)
        if unknown:
            raise TaskSourceError(f"checkpoint names domains not in the config: {sorted(unknown)}")
        self.cursors.update(state["cursors"])
