"""The scene reward: the validity gate times the fraction of the task's constraints that hold.

    reward = valid x held / total     (passed: every constraint held)

An invalid answer (gate.py) scores 0 whatever it contains; a valid one earns a share per
constraint of constraints.py, so a partial layout earns partial credit."""

from __future__ import annotations

from dataclasses import dataclass, field

from posttrain.tasks.scene.constraints import ConstraintResult, check_constraints, constraint_names
from posttrain.tasks.scene.gate import gate
from posttrain.tasks.scene.schema import SceneAnswer, SceneTask


@dataclass(frozen=True)
class SceneScore:
    reward: float
    valid: bool
    reason: str | None
    constraints: list[ConstraintResult] = field(default_factory=list)
    answer: SceneAnswer | None = None

    @property
    def passed(self) -> bool:
        return self.valid and all(c.held for c in self.constraints)

    def to_json(self) -> dict:
        return {
            "reward": self.reward,
            "valid": self.valid,
            **({"reason": self.reason} if self.reason else {}),
            "passed": self.passed,
            "held": sum(c.held for c in self.constraints),
            "total": len(self.constraints),
            "constraints": [c.to_json() for c in self.constraints],
        }


def score_reply(reply: str, task: SceneTask) -> SceneScore:
    checked = gate(reply, task)
    if not checked.valid:
        failed = [ConstraintResult(name, False, "invalid answer") for name in constraint_names(task)]
        return SceneScore(0.0, False, checked.reason, failed)
    results = check_constraints(task, checked.answer)
    reward = sum(r.held for r in results) / len(results)
    return SceneScore(reward, True, None, results, checked.answer)
