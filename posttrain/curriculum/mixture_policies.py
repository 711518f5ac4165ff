"""How a step's prompt slots are shared among domains: the `[mixture] policy`.

Each policy turns the domains' configured weights and what it observed of their recent groups
into this step's sampling weights:

    static        w_d
    sequential    one domain at a time, in the configured order, `phase_steps` steps each (the
                  baseline joint training is measured against: it shows the seesaw)
    learnability  w_d * p_d (1 - p_d), p_d the pass rate of domain d's last `window` groups; a
                  domain with no groups yet counts as maximally learnable (p = 1/2)
    bandit        UCB1: mean_d + c * sqrt(ln N / n_d), mean_d the mean |advantage| of domain d's
                  last `window` groups (0 for a group whose rewards are all equal: nothing to
                  learn), n_d its groups so far, N all groups; an unpulled domain comes first

and an adaptive policy's shares are mixed with a floor, share_d >= floor, so that no domain starves and
one that looked solved (or hopeless) is still re-probed.
"""

from __future__ import annotations

import math
from collections import deque


class MixturePolicy:
    name = "static"
    adaptive = False  # a static mixture is the configured weights as they are: no floor

    def __init__(self, window: int = 16, floor: float = 0.05, bandit_c: float = 1.0, phase_steps: int = 1) -> None:
        self.window, self.floor, self.bandit_c, self.phase_steps = window, floor, bandit_c, phase_steps
        self.pass_rates: dict[str, deque] = {}
        self.signal: dict[str, deque] = {}
        self.pulls: dict[str, int] = {}

    def observe(self, domain: str, pass_rate: float, mean_abs_advantage: float) -> None:
        """One group of `domain`: the fraction of its samples that passed and its mean |advantage|."""
        self.pass_rates.setdefault(domain, deque(maxlen=self.window)).append(pass_rate)
        self.signal.setdefault(domain, deque(maxlen=self.window)).append(mean_abs_advantage)
        self.pulls[domain] = self.pulls.get(domain, 0) + 1

    def pass_rate(self, domain: str) -> float | None:
        recent = self.pass_rates.get(domain)
        return sum(recent) / len(recent) if recent else None

    def scores(self, weights: dict[str, float], step: int = 0) -> dict[str, float]:
        return dict(weights)

    def shares(self, weights: dict[str, float], step: int = 0) -> dict[str, float]:
        """Step `step`'s sampling shares (they sum to 1), the floor applied."""
        scores = self.scores(weights, step)
        total = sum(scores.values())
        if total <= 0:  # nothing scores (e.g. every domain solved): fall back to the configured weights
            scores, total = dict(weights), sum(weights.values())
        raw = {d: s / total for d, s in scores.items()}
        if not self.adaptive:
            return raw
        floor = min(self.floor, 1.0 / len(raw))
        return {d: floor + (1.0 - floor * len(raw)) * share for d, share in raw.items()}

    def state_dict(self) -> dict:
        return {
            "pass_rates": {d: list(v) for d, v in self.pass_rates.items()},
            "signal": {d: list(v) for d, v in self.signal.items()},
            "pulls": dict(self.pulls),
        }

    def load_state_dict(self, state: dict) -> None:
        self.pass_rates = {d: deque(v, maxlen=self.window) for d, v in state.get("pass_rates", {}).items()}
        self.signal = {d: deque(v, maxlen=self.window) for d, v in state.get("signal", {}).items()}
        self.pulls = dict(state.get("pulls", {}))


class SequentialPolicy(MixturePolicy):
    name = "sequential"

    def scores(self, weights: dict[str, float], step: int = 0) -> dict[str, float]:
        names = list(weights)
        current = names[min(max(step - 1, 0) // self.phase_steps, len(names) - 1)]
        return {d: (1.0 if d == current else 0.0) for d in names}


class LearnabilityPolicy(MixturePolicy):
    name = "learnability"
    adaptive = True

    def scores(self, weights: dict[str, float], step: int = 0) -> dict[str, float]:
        scores = {}
        for domain, weight in weights.items():
            p = self.pass_rate(domain)
            p = 0.5 if p is None else p
            scores[domain] = weight * p * (1.0 - p)
        return scores


class BanditPolicy(MixturePolicy):
    name = "bandit"
    adaptive = True

    def scores(self, weights: dict[str, float], step: int = 0) -> dict[str, float]:
        unpulled = [d for d in weights if not self.pulls.get(d)]
        if unpulled:  # UCB's first round: every arm once
            return {d: (1.0 if d in unpulled else 0.0) for d in weights}
        total = sum(self.pulls[d] for d in weights)
        scores = {}
        for domain, weight in weights.items():
            recent = self.signal[domain]
            mean = sum(recent) / len(recent)
            bonus = self.bandit_c * math.sqrt(math.log(total) / self.pulls[domain])
            scores[domain] = weight * (mean + bonus)
        return scores


POLICIES = {p.name: p for p in (MixturePolicy, SequentialPolicy, LearnabilityPolicy, BanditPolicy)}


def make_policy(
    name: str, window: int = 16, floor: float = 0.05, bandit_c: float = 1.0, phase_steps: int = 1
) -> MixturePolicy:
    if name not in POLICIES:
        raise ValueError(f"unknown mixture policy {name!r}; choose one of {', '.join(POLICIES)}")
    return POLICIES[name](window=window, floor=floor, bandit_c=bandit_c, phase_steps=phase_steps)
