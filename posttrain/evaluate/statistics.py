"""Confidence intervals for accuracy differences."""

from __future__ import annotations

import numpy as np


def paired_bootstrap_ci(
    before: list[float], after: list[float], samples: int = 2000, seed: int = 0, level: float = 0.95
) -> tuple[float, float, float]:
    """Mean difference (after - before) over the same items, and its percentile bootstrap
    interval: resample items with replacement, keeping each item's before/after pair together."""
    if len(before) != len(after) or not before:
        raise ValueError("paired bootstrap needs two equal-length, non-empty lists")
    diffs = np.asarray(after, dtype=float) - np.asarray(before, dtype=float)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(diffs), size=(samples, len(diffs)))
    means = diffs[idx].mean(axis=1)
    alpha = (1 - level) / 2
    return float(diffs.mean()), float(np.quantile(means, alpha)), float(np.quantile(means, 1 - alpha))
