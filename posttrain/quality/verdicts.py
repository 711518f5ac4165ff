"""One verdict per task from its checks. A check that fails names the verdict it implies; the
task gets the most fundamental one: a task that does not build cannot be judged unsolvable,
and a verifier that answers at random explains any single run's result."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

VERDICTS = ("invalid", "unhealthy", "flaky", "broken_verifier", "unsolvable", "exploitable", "no_signal", "ok")
PRECEDENCE = {verdict: rank for rank, verdict in enumerate(VERDICTS)}

PASS, FAIL, WARN, SKIP = "pass", "fail", "warn", "skip"


@dataclass
class Check:
    """One check of one task: `status` pass/fail/warn/skip; a failed check implies `verdict`."""

    name: str
    kind: str  # load, environment, execution, probe, lint, signal
    status: str
    summary: str
    verdict: str | None = None
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def decide(checks: list[Check]) -> tuple[str, str]:
    """(verdict, reason): the highest-precedence verdict among the failed checks, or ok."""
    failed = [c for c in checks if c.status == FAIL and c.verdict]
    if not failed:
        return "ok", ""
    worst = min(failed, key=lambda c: PRECEDENCE[c.verdict])
    same = [c for c in failed if c.verdict == worst.verdict]
    return worst.verdict, "; ".join(f"{c.name}: {c.summary}" for c in same)
