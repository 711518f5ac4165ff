"""The scene domain: structured 3D layout tasks with a hard validity gate and geometric rewards.

    from posttrain.tasks.scene import generate, solve, score_reply, describe

    task = generate(difficulty=2, seed=7)        # a SceneTask: room, objects, relations
    prompt = describe(task)                      # the task in words, with the answer format
    oracle = solve(task).model_dump_json()       # the reference solver's answer
    score = score_reply(reply_text, task)        # SceneScore: reward, valid, reason, constraints

As a task source: `source = "scene:2"` (or "scene:1,2") in a config's [[domains]], and
`posttrain eval --tasks scene:2:20`. The schema and the reward: docs/scene.md.
"""

from posttrain.tasks.scene.generator import MAX_DIFFICULTY, generate
from posttrain.tasks.scene.prompt import describe
from posttrain.tasks.scene.schema import SceneAnswer, SceneObject, SceneTask
from posttrain.tasks.scene.scoring import SceneScore, score_reply
from posttrain.tasks.scene.solver import solve

__all__ = [
    "MAX_DIFFICULTY",
    "SceneAnswer",
    "SceneObject",
    "SceneScore",
    "SceneTask",
    "describe",
    "generate",
    "score_reply",
    "solve",
]
