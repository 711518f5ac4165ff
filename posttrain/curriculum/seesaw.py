"""The seesaw monitor: one domain falls while another rises.

Each monitoring evaluation gives, per domain, the correctness of the same fixed held-out items.
For domain A, let b be its best evaluation so far and t the latest. A *fell* when, on the same
items, significantly more went from right to wrong than from wrong to right between b and t: an
exact McNemar test on the discordant pairs,

    n10 = #(right at b, wrong at t),  n01 = #(wrong at b, right at t)
    p   = P[Binomial(n10 + n01, 1/2) >= n10]          (one-sided: a fall)

with p < alpha and A's accuracy at t below b's. Another domain B *rose* over the same span when
the same test, from B's result at b to its result at t, is significant the other way. A fall of
A with a rise of B is a seesaw alarm, naming both with the evidence. A fall with no rise is
reported as a fall (forgetting), not as a seesaw.

With many domains, a test per domain at alpha raises false alarms by the number of domains; with
`fdr` set, the falls of one evaluation are kept by the Benjamini-Hochberg procedure instead,
which bounds the expected share of false alarms among them by `fdr`. An evaluation may cover a
subset of the domains (a rotating monitor): each domain is compared only with the evaluations
that covered it.

A check may also stop a domain early (a sequential check, `steady_so_far`): its items are
evaluated in stages, and after a stage whose items show no more falls than rises against the
domain's best, the rest are skipped. Such an entry holds the prefix evaluated; it is compared on
that prefix and is never itself a domain's best (only complete entries are). Stopping only ever
skips a chance to alarm, so it adds no false alarms; the price is some power at that check,
which the domain's next check restores.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass


def mcnemar_one_sided(n_worse: int, n_better: int) -> float:
    """P[X >= n_worse] for X ~ Binomial(n_worse + n_better, 1/2): how likely so many of the
    changed items changed for the worse if a change were a coin flip."""
    n = n_worse + n_better
    if n == 0:
        return 1.0
    return sum(math.comb(n, k) for k in range(n_worse, n + 1)) / 2**n


def wilson_interval(correct: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score 95% interval of a pass rate (sound at 0 and 1 and for small n)."""
    if n == 0:
        return 0.0, 1.0
    p = correct / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def benjamini_hochberg(p_values: dict[str, float], q: float) -> set[str]:
    """The hypotheses rejected at false discovery rate q: with the m p-values sorted,
    p_(1) <= ... <= p_(m), the largest k with p_(k) <= k q / m, and every p-value up to p_(k)."""
    ranked = sorted(p_values.items(), key=lambda item: (item[1], item[0]))
    m = len(ranked)
    cut = max((k for k, (_, p) in enumerate(ranked, start=1) if p <= k * q / m), default=0)
    return {name for name, _ in ranked[:cut]}


def steady_so_far(best: list[bool], now: list[bool]) -> bool:
    """Whether the items evaluated so far (`now`, a prefix of the check) changed no more often
    for the worse than for the better against the same items at the domain's best: the answer to
    "did it fall?" is clear enough to stop this check early."""
    worse, better = paired_change(best, now)
    return worse <= better


def paired_change(before: list[bool], after: list[bool]) -> tuple[int, int]:
    """(items right before and wrong after, items wrong before and right after)."""
    worse = sum(b and not a for b, a in zip(before, after))
    better = sum(a and not b for b, a in zip(before, after))
    return worse, better


@dataclass
class Change:
    domain: str
    from_step: int
    to_step: int
    accuracy_from: float
    accuracy_to: float
    items_worse: int
    items_better: int
    p_value: float


@dataclass
class Alarm:
    step: int
    falling: Change
    rising: list[Change]

    @property
    def kind(self) -> str:
        return "seesaw" if self.rising else "fall"

    def to_json(self) -> dict:
        return {
            "step": self.step,
            "kind": self.kind,
            "falling": asdict(self.falling),
            "rising": [asdict(r) for r in self.rising],
        }

    def message(self) -> str:
        f = self.falling
        text = (
            f"{self.kind} alarm at step {self.step}: {f.domain} fell {f.accuracy_from:.3f} -> {f.accuracy_to:.3f} "
            f"since step {f.from_step} ({f.items_worse} items worse, {f.items_better} better, p={f.p_value:.3g})"
        )
        for r in self.rising:
            text += f"; {r.domain} rose {r.accuracy_from:.3f} -> {r.accuracy_to:.3f} (p={r.p_value:.3g})"
        return text


class SeesawMonitor:
    """Keeps every monitoring evaluation (step -> domain -> per-item correctness) and checks the
    latest against each domain's best."""

    def __init__(self, alpha: float = 0.05, fdr: float = 0.0) -> None:
        self.alpha, self.fdr = alpha, fdr
        self.history: list[tuple[int, dict[str, list[bool]]]] = []

    def observe(self, step: int, results: dict[str, list[bool]]) -> list[Alarm]:
        """Add an evaluation (of every domain or some); the alarms it raises (one per falling
        domain: p < alpha each, or with `fdr` the falls Benjamini-Hochberg keeps)."""
        self.history.append((step, {d: list(v) for d, v in results.items()}))
        if not self.fdr:
            return [alarm for domain in sorted(results) if (alarm := self._check(domain)) is not None]
        candidates = {d: change for d in sorted(results) if (change := self._fall(d, alpha=1.0)) is not None}
        kept = benjamini_hochberg({d: change.p_value for d, change in candidates.items()}, self.fdr)
        return [self._alarm(candidates[d]) for d in sorted(kept)]

    def falling(self, domain: str) -> bool:
        """Whether `domain`'s latest result is still below its best beyond noise."""
        return self._fall(domain) is not None

    def _entries(self, domain: str) -> list[int]:
        return [i for i, (_, results) in enumerate(self.history) if domain in results]

    def _best_index(self, domain: str) -> int:
        """The complete entry (every item evaluated, not stopped early) with the best accuracy."""
        entries = self._entries(domain)
        size = max(len(self.history[i][1][domain]) for i in entries)
        complete = [i for i in entries if len(self.history[i][1][domain]) == size]
        return max(complete, key=lambda i: (_accuracy(self.history[i][1][domain]), -i))

    def best_items(self, domain: str) -> list[bool] | None:
        """The per-item results of the domain's best evaluation so far (None before its first)."""
        if not self._entries(domain):
            return None
        return list(self.history[self._best_index(domain)][1][domain])

    def _change(self, domain: str, i: int, j: int, worse_is_fall: bool) -> Change:
        """The change between entries i and j on the items both evaluated (a prefix, when one
        of them stopped early)."""
        (step_i, at_i), (step_j, at_j) = self.history[i], self.history[j]
        n = min(len(at_i[domain]), len(at_j[domain]))
        before, after = at_i[domain][:n], at_j[domain][:n]
        worse, better = paired_change(before, after)
        p = mcnemar_one_sided(worse, better) if worse_is_fall else mcnemar_one_sided(better, worse)
        return Change(domain, step_i, step_j, _accuracy(before), _accuracy(after), worse, better, p)

    def _fall(self, domain: str, alpha: float | None = None) -> Change | None:
        entries = self._entries(domain)
        if not entries:
            return None
        best, last = self._best_index(domain), entries[-1]
        if best == last:
            return None
        change = self._change(domain, best, last, worse_is_fall=True)
        threshold = self.alpha if alpha is None else alpha
        return change if change.p_value < threshold and change.accuracy_to < change.accuracy_from else None

    def _check(self, domain: str) -> Alarm | None:
        fall = self._fall(domain)
        return None if fall is None else self._alarm(fall)

    def _alarm(self, fall: Change) -> Alarm:
        """The alarm of a fall, with the domains that rose significantly over the same span."""
        best, last = self._best_index(fall.domain), len(self.history) - 1
        rising = []
        for other in sorted(self.history[last][1]):
            if other == fall.domain or other not in self.history[best][1]:
                continue
            rise = self._change(other, best, last, worse_is_fall=False)
            if rise.p_value < self.alpha and rise.accuracy_to > rise.accuracy_from:
                rising.append(rise)
        return Alarm(self.history[last][0], fall, rising)

    def state_dict(self) -> dict:
        return {"history": [[step, results] for step, results in self.history]}

    def load_state_dict(self, state: dict) -> None:
        self.history = [(int(step), results) for step, results in state.get("history", [])]


def _accuracy(items: list[bool]) -> float:
    return sum(items) / len(items) if items else 0.0
