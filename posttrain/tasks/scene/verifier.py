"""The `scene` verifier: a model's reply to a scene task -> Reward (scoring.py's reward)."""

from __future__ import annotations

from posttrain.tasks.records import Reward, Task
from posttrain.tasks.scene.schema import SceneTask
from posttrain.tasks.scene.scoring import score_reply


def verify_scene(text: str, task: Task) -> Reward:
    score = score_reply(text, SceneTask.model_validate(task.metadata["scene"]))
    details = score.to_json()
    return Reward(value=score.reward, passed=score.passed, details=details)
