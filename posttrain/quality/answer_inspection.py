"""The quality gate for answer domains (reasoning-gym, JSONL, parquet, hf-dataset, scene,
python: rewards): the same verdicts as for terminal tasks (verdicts.py), for items and domains.

Per item (the held-out items and the first training items, up to `max_items`):
    reference        the reference answer, written as the domain's answer extraction reads it,
                     passes the domain's own verifier                         (else unsolvable);
                     an item with no reference (None: the verifier judges any valid answer,
                     as reasoning-gym's graph_color does) is not checked
    verifier_runs    scoring it does not raise                            (else broken_verifier)
    duplicate        no earlier item has the same prompt and answer                (else invalid)
    conflicting      no other item has the same prompt and another answer          (else invalid)
    heldout_overlap  a training item's prompt is no held-out item's prompt         (else invalid)

Per domain:
    load / split     the source builds and splits into held-out and training       (else invalid)
    probe:NAME       the verifier refuses an empty, constant or garbage answer (answer_replies.py)
                     on the items whose reference it differs from          (else exploitable),
                     and scores it within the worker's time and memory cap
                     (scoring_worker.py)                                (else broken_verifier)
    usable_items     at least one item checked is not quarantined  (else the items' worst verdict)
    signal           with a model: its pass rate over k samples on a probe set of items is
                     strictly between 0 and 1                                    (else no_signal)

A domain whose verdict is not ok is dropped whole; a kept domain loses its quarantined items.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from posttrain.errors import TaskSourceError
from posttrain.quality.answer_replies import (
    as_reply,
    normalized,
    probe_answers,
    probe_reply,
    prompt_text,
    same_answer,
)
from posttrain.quality.scoring_worker import ScoringFailed
from posttrain.quality.verdicts import FAIL, PASS, PRECEDENCE, WARN, Check, decide
from posttrain.tasks.domains import Domain
from posttrain.tasks.records import Reward, Task
from posttrain.tasks.sources import TaskSource, content_key
from posttrain.tasks.verifiers import score


@dataclass
class AnswerInspectOptions:
    max_items: int = 200  # items checked per domain: the held-out ones first, then training ones
    probe_items: int = 16  # items each probe answer is tried on
    hack_rate: float = 0.2  # a probe passing on this share of its items (at least one) flags the verifier


@dataclass
class ItemReport:
    """One quarantined item: shaped as the terminal inspection's TaskReport (report.py reads both)."""

    id: str
    path: str  # the domain
    index: int  # in the domain's source
    checks: list[Check] = field(default_factory=list)
    verdict: str = "ok"
    reason: str = ""
    pass_rate: float | None = None
    duration_s: float = 0.0

    @property
    def cached_from(self) -> None:
        """Answer inspections run afresh each time; report.py reads this of every report."""
        return None

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "kind": "item",
            "path": self.path,
            "index": self.index,
            "verdict": self.verdict,
            "reason": self.reason,
            "duration_s": round(self.duration_s, 3),
            "pass_rate": self.pass_rate,
            "cached_from": self.cached_from,
            "checks": [c.to_dict() for c in self.checks],
        }


@dataclass
class DomainReport:
    """One answer domain's verdict, its domain-level checks and its quarantined items."""

    id: str  # the domain's name
    path: str  # its source
    checks: list[Check] = field(default_factory=list)
    verdict: str = "ok"
    reason: str = ""
    items_checked: int = 0
    items: list[ItemReport] = field(default_factory=list)  # the quarantined ones
    pass_rate: float | None = None
    duration_s: float = 0.0

    @property
    def cached_from(self) -> None:
        """Answer inspections run afresh each time; report.py reads this of every report."""
        return None

    @property
    def dropped(self) -> bool:
        return self.verdict != "ok"

    def left_out(self) -> set[int]:
        """Source indices of the quarantined items."""
        return {item.index for item in self.items}

    def decide(self) -> None:
        self.verdict, self.reason = decide(self.checks)

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "kind": "domain",
            "path": self.path,
            "verdict": self.verdict,
            "reason": self.reason,
            "duration_s": round(self.duration_s, 3),
            "items_checked": self.items_checked,
            "items_quarantined": len(self.items),
            "pass_rate": self.pass_rate,
            "cached_from": self.cached_from,
            "checks": [c.to_dict() for c in self.checks],
        }


def load_failure(name: str, source_spec: str, problem: str) -> DomainReport:
    """The report of a domain whose source did not build."""
    report = DomainReport(name, source_spec, [Check("load", "load", FAIL, problem, "invalid")])
    report.decide()
    return report


def inspect_answer_domain(
    name: str,
    source_spec: str,
    source: TaskSource,
    heldout: int,
    seed: int,
    options: AnswerInspectOptions,
    scorer: Callable[[str, Task], Reward] = score,
) -> DomainReport:
    """Every check above but the signal check (answer_signal.py adds it). `scorer`: the
    verifier call (scoring_worker.Scorer runs it in a capped process; by default, here)."""
    started = time.perf_counter()
    report = DomainReport(name, source_spec)
    try:
        domain = Domain(name=name, source=source, weight=1.0, heldout_size=heldout, seed=seed)
    except TaskSourceError as exc:
        report.checks.append(Check("split", "load", FAIL, str(exc), "invalid"))
        report.decide()
        return report
    heldout_indices = domain.heldout_indices[: options.max_items]
    training_indices = domain.training_indices[: max(0, options.max_items - len(heldout_indices))]
    chosen = [(i, True) for i in heldout_indices] + [(i, False) for i in training_indices]
    tasks = {index: source.get(index) for index, _ in chosen}
    checks: dict[int, list[Check]] = defaultdict(list)
    unreferenced = {index for index, task in tasks.items() if not has_reference(task)}
    passing = _reference_checks({i: t for i, t in tasks.items() if i not in unreferenced}, checks, scorer)
    _duplicate_checks(chosen, tasks, checks)
    report.items_checked = len(chosen)
    for index, _ in chosen:
        item = ItemReport(tasks[index].id, name, index, checks[index])
        item.verdict, item.reason = decide(item.checks)
        if item.verdict != "ok":
            report.items.append(item)
    referenced = len(tasks) - len(unreferenced)
    summary = f"{len(passing)} of {referenced} reference answers pass the domain's verifier"
    report.checks.append(
        Check(
            "reference",
            "execution",
            PASS if len(passing) == referenced else WARN,
            summary + (f"; {len(unreferenced)} items have none" if unreferenced else ""),
            evidence={"passed": len(passing), "checked": referenced, "no_reference": len(unreferenced)},
        )
    )
    probed = [task for index, task in tasks.items() if index in passing or index in unreferenced]
    report.checks += probe_checks(probed[: options.probe_items], options, scorer)
    report.checks.append(_usable_check(report))
    report.decide()
    report.duration_s = time.perf_counter() - started
    return report


def has_reference(task: Task) -> bool:
    return task.answer is not None and not (isinstance(task.answer, str) and not task.answer.strip())


def _reference_checks(tasks: dict[int, Task], checks: dict[int, list[Check]], scorer) -> set[int]:
    """Score each reference answer; the indices whose reference passes."""
    passing = set()
    for index, task in tasks.items():
        reply = as_reply(task.answer, task)
        try:
            reward = scorer(reply, task)
        except Exception as exc:  # noqa: BLE001 - a verifier that raises on its own reference is the finding
            summary = f"scoring the reference answer raised {type(exc).__name__}: {str(exc)[:200]}"
            checks[index].append(Check("verifier_runs", "execution", FAIL, summary, "broken_verifier"))
            continue
        evidence = {"reply": reply[:500], "value": reward.value, "details": _short(reward.details)}
        if reward.passed:
            passing.add(index)
            continue
        summary = f"the reference answer {str(task.answer)[:80]!r} scores {reward.value:g} under the domain's verifier"
        checks[index].append(Check("reference", "execution", FAIL, summary, "unsolvable", evidence))
    return passing


def _duplicate_checks(chosen: list[tuple[int, bool]], tasks: dict[int, Task], checks) -> None:
    groups: dict[str, list[tuple[int, bool]]] = defaultdict(list)
    for index, held_out in chosen:
        groups[normalized(prompt_text(tasks[index]))].append((index, held_out))
    for members in groups.values():
        if len(members) < 2:
            continue
        answers = {normalized(tasks[i].answer) for i, _ in members}
        first = tasks[members[0][0]]
        if len(answers) > 1:
            ids = ", ".join(tasks[i].id for i, _ in members[:5])
            summary = f"the same prompt has {len(answers)} different answers ({ids})"
            for index, _ in members:
                checks[index].append(Check("conflicting", "lint", FAIL, summary, "invalid"))
        else:
            for index, _ in members[1:]:
                summary = f"the same prompt and answer as {first.id}"
                checks[index].append(Check("duplicate", "lint", FAIL, summary, "invalid"))
        held = [tasks[i] for i, h in members if h]
        for index, held_out in members:
            # the domain itself never trains on an item whose content equals a held-out one
            leaks = [t for t in held if content_key(t) != content_key(tasks[index])]
            if not held_out and leaks:
                summary = f"its prompt is the held-out item {leaks[0].id}'s"
                checks[index].append(Check("heldout_overlap", "lint", FAIL, summary, "invalid"))


def probe_checks(tasks: list[Task], options: AnswerInspectOptions, scorer=score) -> list[Check]:
    """One check per probe answer, over `tasks` (items whose reference passes or that have
    none). A verifier that hangs or dies on a probe answer breaks as it would in training."""
    if not tasks:
        return []
    references = Counter(normalized(t.answer) for t in tasks if has_reference(t)).most_common(1)
    checks = []
    for name, answer in probe_answers(references[0][0] if references else None).items():
        tried = [t for t in tasks if name == "garbage:echo_prompt" or not same_answer(answer, t.answer)]
        passed, values, errors, broke = [], [], 0, None
        for task in tried:
            try:
                reward = scorer(probe_reply(name, answer, task), task)
            except ScoringFailed as exc:
                if not str(exc).startswith("raised"):
                    broke = f"scoring the {name} answer on {task.id}: {exc}"
                    break
                errors += 1
                continue
            except Exception:  # noqa: BLE001 - a verifier that raises on a bad reply refuses it
                errors += 1
                continue
            values.append(reward.value)
            if reward.passed:
                passed.append(task.id)
        evidence = {
            "tried": len(tried),
            "passed": len(passed),
            "passed_items": passed[:10],
            "mean_reward": round(sum(values) / len(values), 4) if values else None,
            "raised": errors,
        }
        if name.startswith("constant:"):
            evidence["answer"] = answer
        if broke:
            checks.append(Check(f"probe:{name}", "probe", FAIL, broke, "broken_verifier", evidence))
            continue
        threshold = max(1, round(options.hack_rate * len(tried)))
        summary = f"the verifier gives full reward to the {name} answer on {len(passed)} of {len(tried)} items"
        if tried and len(passed) >= threshold:
            checks.append(Check(f"probe:{name}", "probe", FAIL, summary, "exploitable", evidence))
        else:
            checks.append(Check(f"probe:{name}", "probe", WARN if passed else PASS, summary, evidence=evidence))
    return checks


def _usable_check(report: DomainReport) -> Check:
    quarantined = Counter(item.verdict for item in report.items)
    counts = ", ".join(f"{v} {n}" for v, n in sorted(quarantined.items()))
    if report.items_checked and len(report.items) == report.items_checked:
        worst = min(quarantined, key=PRECEDENCE.__getitem__)
        summary = f"no usable item: all {report.items_checked} checked are quarantined ({counts})"
        return Check("usable_items", "execution", FAIL, summary, worst)
    summary = f"{report.items_checked - len(report.items)} of {report.items_checked} items usable"
    return Check("usable_items", "execution", PASS, summary + (f" ({counts} quarantined)" if counts else ""))


def _short(details: dict) -> dict:
    return {k: (v[:300] if isinstance(v, str) else v) for k, v in details.items() if k != "reward_extras"}
