"""Domains and the mixture a run samples from.

A domain is a named task source with a weight. Its first `heldout` distinct items (in the
source's own order for procedural generators, in a seeded shuffle for files) form the held-out
set; training draws only items whose content is not in it, so the two are disjoint by
construction, duplicates included.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from posttrain.config import CurriculumConfig, MixtureConfig, MonitorConfig
from posttrain.curriculum import PassRates, choose_cells
from posttrain.curriculum.mixture_policies import make_policy
from posttrain.curriculum.seesaw import Alarm, SeesawMonitor, wilson_interval
from posttrain.curriculum.seesaw_reaction import SeesawReaction
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
    # held-out tasks from elsewhere (other templates, families, hand-written tasks): evaluated
    # with the rest, never trained on
    extra_heldout: list[Task] = field(default_factory=list)
    heldout: list[Task] = field(init=False)
    heldout_indices: list[int] = field(init=False)  # the source indices of `heldout` (extra_heldout aside)
    _order: list[int] = field(init=False)
    _heldout_keys: set[str] = field(init=False)

    def __post_init__(self) -> None:
        order = list(range(len(self.source)))
        if _is_finite_file(self.source):
            random.Random(self.seed).shuffle(order)
        self.heldout, self._heldout_keys, self.heldout_indices = [], set(), []
        position = 0
        while len(self.heldout) < self.heldout_size and position < len(order):
            task = self.source.get(order[position])
            key = content_key(task)
            if key not in self._heldout_keys:
                self._heldout_keys.add(key)
                self.heldout.append(task)
                self.heldout_indices.append(order[position])
            position += 1
        if len(self.heldout) < self.heldout_size:
            raise TaskSourceError(
                f"domain {self.name!r}: asked for {self.heldout_size} held-out items but the source has "
                f"only {len(self.heldout)} distinct ones"
            )
        for task in self.extra_heldout:
            self._heldout_keys.add(content_key(task))
        self.heldout += self.extra_heldout
        training = order[position:]
        if not training:
            raise TaskSourceError(f"domain {self.name!r}: no items left for training after the held-out split")
        # Training order: a seeded permutation of what is left, so consecutive steps see varied items.
        random.Random(self.seed + 1).shuffle(training)
        self._order = training

    @property
    def training_indices(self) -> list[int]:
        """The source indices training draws from, in draw order."""
        return list(self._order)

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

    def __init__(
        self,
        domains: list[Domain],
        seed: int,
        curriculum: CurriculumConfig | None = None,
        mixture: MixtureConfig | None = None,
        monitor: MonitorConfig | None = None,
        total_steps: int = 1,
    ) -> None:
        if not domains:
            raise TaskSourceError("a run needs at least one domain")
        self.mixture_config = mixture or MixtureConfig()
        self.saturated: dict[str, dict[str, int]] = {}  # domain -> item id -> times passed over since
        self.phase_steps = self.mixture_config.phase_steps or max(1, -(-total_steps // len(domains)))
        self.policy = self._make_policy(self.mixture_config.policy)
        monitor = monitor or MonitorConfig()
        self.monitor = SeesawMonitor(monitor.alpha, monitor.fdr)
        self.reaction = SeesawReaction(
            monitor.reaction, monitor.reweight_factor, monitor.max_boost, monitor.refresh_steps
        )
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

    def _make_policy(self, name: str):
        cfg = self.mixture_config
        return make_policy(name, cfg.window, cfg.floor, cfg.bandit_c, self.phase_steps)

    def set_policy(self, name: str) -> None:
        """Change the mixture policy while the run goes; what it observed so far carries over."""
        state = self.policy.state_dict()
        self.policy = self._make_policy(name)
        self.policy.load_state_dict(state)

    def sampling_weights(self, step: int) -> dict[str, float]:
        """This step's weight per domain: a refresh's domain alone; else the policy's shares of
        the configured weights (those boosted by a reweight reaction)."""
        refresh = self.reaction.refresh_domain(step)
        if refresh is not None:
            return {n: (1.0 if n == refresh else 0.0) for n in self.domains}
        weights = self.reaction.weights({n: d.weight for n, d in self.domains.items()})
        if self.policy.name == "static":
            return weights  # the configured weights as they are: the stream of runs before policies existed
        return self.policy.shares(weights, step)

    def sample_step(self, step: int, n_prompts: int) -> list[Task]:
        rng = random.Random(f"{self.seed}:{step}")
        names = list(self.domains)
        chosen = self.sampling_weights(step)
        weights = [chosen[n] for n in names]
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
                task = self._next_item(name)
            tasks.append(task)
        return tasks

    def _next_item(self, name: str) -> Task:
        """The domain's next training item. Under the learnability policy an item whose last
        group was solved by every sample or by none teaches nothing now: it is passed over, but
        re-probed every `reprobe_every`-th time it comes up, in case the policy changed."""
        domain, saturated = self.domains[name], self.saturated.setdefault(name, {})
        for _ in range(len(domain.heldout) + domain.training_size):
            task, self.cursors[name] = domain.training_task(self.cursors[name])
            if self.policy.name != "learnability" or task.id not in saturated:
                return task
            saturated[task.id] += 1
            if saturated[task.id] >= self.mixture_config.reprobe_every:
                saturated[task.id] = 0
                return task
        return task  # every item looked saturated: take the next one anyway

    def observe(self, groups, advantages=None, step: int | None = None) -> dict[str, float]:
        """Feed a step's groups (each with .task and .rewards; `advantages`: groups x samples)
        to the mixture policy and the curriculum; returns the step's metrics: per domain its
        weight for the next step and its recent pass rate, and the curriculum's pass-rate
        estimates per family and difficulty."""
        metrics = self._observe_policy(groups, advantages, step)
        if not self.rates:
            return metrics
        for group in groups:
            task = group.task
            rates = self.rates.get(task.domain)
            family, difficulty = task.metadata.get("family"), task.metadata.get("difficulty")
            if rates is not None and family is not None and difficulty is not None:
                rates.add((family, int(difficulty)), [r.passed for r in group.rewards])
        for name, rates in self.rates.items():
            prefix = "curriculum" if len(self.rates) == 1 else f"curriculum/{name}"
            metrics.update(rates.metrics(prefix))
        return metrics

    def _observe_policy(self, groups, advantages, step: int | None) -> dict[str, float]:
        for index, group in enumerate(groups):
            rewards = group.rewards
            row = [float(a) for a in advantages[index]] if advantages is not None else []
            signal = sum(abs(a) for a in row) / len(row) if row else 0.0
            rate = sum(r.passed for r in rewards) / max(len(rewards), 1)
            self.policy.observe(group.task.domain, rate, signal)
            saturated = self.saturated.setdefault(group.task.domain, {})
            if rate in (0.0, 1.0):
                saturated.setdefault(group.task.id, 0)
            else:
                saturated.pop(group.task.id, None)
        shares = self.sampling_weights(step + 1 if step is not None else 0)
        total = sum(shares.values()) or 1.0
        metrics = {}
        for name in self.domains:
            metrics[f"mixture/{name}/weight"] = shares[name] / total
            rate = self.policy.pass_rate(name)
            if rate is not None:
                metrics[f"mixture/{name}/pass_rate"] = rate
        return metrics

    def monitored_items(self, n: int) -> dict[str, list[Task]]:
        """The fixed held-out subset the monitor evaluates: each domain's first `n` held-out items."""
        return {name: d.heldout[:n] for name, d in self.domains.items()}

    def after_evaluation(self, step: int, results: dict[str, list[bool]]) -> tuple[dict, list[Alarm], list[str]]:
        """A monitoring evaluation's per-domain, per-item results -> (metrics: accuracy with its
        Wilson 95% interval per domain, and the alarm count; the alarms; what the reaction did)."""
        alarms = self.monitor.observe(step, results)
        actions = self.reaction.on_recovered([d for d in self.reaction.boosts if not self.monitor.falling(d)])
        actions += self.reaction.on_alarms(step, alarms)
        metrics: dict[str, float] = {}
        for name, items in sorted(results.items()):
            low, high = wilson_interval(sum(items), len(items))
            metrics[f"monitor/{name}/accuracy"] = sum(items) / max(len(items), 1)
            metrics[f"monitor/{name}/ci_low"], metrics[f"monitor/{name}/ci_high"] = low, high
        metrics["monitor/alarms"] = float(len(alarms))
        return metrics, alarms, actions

    def heldout(self) -> list[Task]:
        return [task for d in self.domains.values() for task in d.heldout]

    def state_dict(self) -> dict:
        return {
            "cursors": dict(self.cursors),
            "cell_cursors": dict(self.cell_cursors),
            "pass_rates": {name: rates.state_dict() for name, rates in self.rates.items()},
            "policy": {"name": self.policy.name, **self.policy.state_dict()},
            "saturated": {name: dict(items) for name, items in self.saturated.items()},
            "monitor": self.monitor.state_dict(),
            "reaction": self.reaction.state_dict(),
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
        if "policy" in state:  # a policy changed while the run went stays changed
            self.policy = self._make_policy(state["policy"]["name"])
            self.policy.load_state_dict(state["policy"])
        self.saturated = {name: dict(items) for name, items in state.get("saturated", {}).items()}
        self.monitor.load_state_dict(state.get("monitor", {}))
        self.reaction.load_state_dict(state.get("reaction", {}))
