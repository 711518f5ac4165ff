"""The curriculum: pass-rate windows per (family, difficulty) cell, the cell choice, and a
mixture over a generated terminal domain that draws by it and keeps its state over a resume."""

import random

from posttrain.config import CurriculumConfig
from posttrain.curriculum import PassRates, choose_cells
from posttrain.tasks.domains import Domain, DomainMixture
from posttrain.tasks.records import Reward
from posttrain.tasks.terminal_gen import TerminalGenSource

CELLS = [("a", 1), ("b", 1), ("c", 1), ("d", 1)]


def rates_with(outcomes: dict) -> PassRates:
    rates = PassRates(window=8, min_episodes=4)
    for cell, passed in outcomes.items():
        rates.add(cell, passed)
    return rates


def test_the_window_keeps_the_most_recent_episodes():
    rates = rates_with({("a", 1): [False] * 8})
    assert rates.estimate(("a", 1)) == 0.0
    rates.add(("a", 1), [True] * 6)
    assert rates.estimate(("a", 1)) == 6 / 8
    assert rates.estimate(("b", 1)) is None
    assert rates.metrics() == {"curriculum/a/d1": 0.75}


def test_unknown_cells_are_probed_first_then_only_cells_solved_sometimes():
    rng = random.Random(0)
    assert sorted(choose_cells(CELLS, PassRates(), 4, step=1, rng=rng, reprobe_every=4)) == sorted(CELLS)
    rates = rates_with(
        {("a", 1): [True] * 8, ("b", 1): [False] * 8, ("c", 1): [True, False] * 4, ("d", 1): [False] * 8}
    )
    picks = [cell for step in (1, 2, 3, 5, 6, 7) for cell in choose_cells(CELLS, rates, 8, step, rng, 4)]
    assert set(picks) == {("c", 1)}  # off the re-probe steps: only the cell in between


def test_cells_solved_never_or_always_are_reprobed_stalest_first():
    rates = rates_with(
        {("a", 1): [True] * 8, ("b", 1): [False] * 8, ("c", 1): [True, False] * 4, ("d", 1): [False] * 8}
    )
    rates.drawn(("a", 1), 3)
    rates.drawn(("d", 1), 2)
    picks = choose_cells(CELLS, rates, 4, step=4, rng=random.Random(0), reprobe_every=4)
    assert picks.count(("b", 1)) == 1  # never drawn: the stalest
    assert set(picks) == {("b", 1), ("c", 1)}


class _Group:
    def __init__(self, task, passed):
        self.task = task
        self.rewards = [Reward(value=float(p), passed=p) for p in passed]


def test_a_mixture_draws_by_cell_learns_pass_rates_and_resumes(tmp_path):
    def mixture():
        source = TerminalGenSource("t", ["files-dirs", "text-processing"], [1, 2], seed=0, size=400, cache_dir=tmp_path)
        domain = Domain("t", source, 1.0, heldout_size=4, seed=0)
        return DomainMixture([domain], seed=0, curriculum=CurriculumConfig(enabled=True, window=8, min_episodes=4))

    first = mixture()
    tasks = first.sample_step(1, 4)
    cells = {(t.metadata["family"], t.metadata["difficulty"]) for t in tasks}
    assert len(cells) == 4  # every cell probed once
    heldout = {t.metadata["content_digest"] for t in first.heldout()}
    assert not heldout & {t.metadata["content_digest"] for t in tasks}
    # files-dirs d1 solved sometimes, the rest never or always
    outcome = {("files-dirs", 1): [True, False] * 2, ("files-dirs", 2): [True] * 4}
    metrics = first.observe(
        [_Group(t, outcome.get((t.metadata["family"], t.metadata["difficulty"]), [False] * 4)) for t in tasks]
    )
    assert metrics["curriculum/files-dirs/d1"] == 0.5 and metrics["curriculum/text-processing/d2"] == 0.0
    step2 = first.sample_step(2, 6)
    assert {(t.metadata["family"], t.metadata["difficulty"]) for t in step2} == {("files-dirs", 1)}
    assert len({t.id for t in step2}) == 6  # the cell's own stream moves on

    resumed = mixture()
    resumed.load_state_dict(first.state_dict())
    assert [t.id for t in resumed.sample_step(3, 4)] == [t.id for t in first.sample_step(3, 4)]


def test_without_a_curriculum_nothing_changes(tmp_path):
    source = TerminalGenSource("t", ["files-dirs"], [1], seed=0, size=50, cache_dir=tmp_path)
    plain = DomainMixture([Domain("t", source, 1.0, heldout_size=2, seed=0)], seed=0)
    metrics = plain.observe([])
    assert metrics == {"mixture/t/weight": 1.0} and "pass_rates" in plain.state_dict()
