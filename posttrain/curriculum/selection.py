"""Which cells a step draws from: a pure function of the pass-rate estimates.

unknown     fewer than min_episodes outcomes: probed first, so every cell gets an estimate
active      0 < p < 1: the policy solves them sometimes, so a group has non-zero
            advantages; drawn with weight p(1 - p), largest where outcomes vary most
saturated   p = 0 (never solved) or p = 1 (always): no gradient in a group; every
            `reprobe_every` steps one slot re-probes the one drawn longest ago, since what is
            solved never today may be solved sometimes after training on its neighbours
"""

from __future__ import annotations

import random

from posttrain.curriculum.pass_rates import Cell, PassRates


def choose_cells(
    cells: list[Cell], rates: PassRates, n: int, step: int, rng: random.Random, reprobe_every: int
) -> list[Cell]:
    """n cells (with repeats) for this step's n prompt slots."""
    estimates = {cell: rates.estimate(cell) for cell in cells}
    unknown = [c for c in cells if estimates[c] is None]
    active = [c for c in cells if estimates[c] is not None and 0.0 < estimates[c] < 1.0]
    saturated = [c for c in cells if estimates[c] in (0.0, 1.0)]
    rng.shuffle(unknown)
    chosen = sorted(unknown, key=lambda c: rates.last_drawn.get(c, -1))[:n]
    if saturated and len(chosen) < n and (not active or step % reprobe_every == 0):
        stalest = min(saturated, key=lambda c: (rates.last_drawn.get(c, -1), cells.index(c)))
        chosen.append(stalest)
    while len(chosen) < n:
        if active:
            weights = [estimates[c] * (1.0 - estimates[c]) for c in active]
            chosen.append(rng.choices(active, weights=weights)[0])
        else:  # nothing in between: every cell is solved never or always; keep them all in play
            chosen.append(rng.choice(saturated or cells))
    return chosen
