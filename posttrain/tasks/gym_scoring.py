"""A reasoning-gym generator's own `score_answer`, as the reward worker runs it.

The generators are third-party code: a scorer may raise on an odd answer (boxnet on
"1e999999": TypeError) or loop. So verify_reasoning_gym calls `score_entry` in the reward
worker (posttrain.tasks.custom_rewards), where a raise comes back as the sample's error and a
hang is killed at its timeout, instead of here in the training process.
"""

from __future__ import annotations

from functools import cache

from posttrain.tasks import gym_entries
from posttrain.tasks.reasoning_gym_import import import_reasoning_gym


@cache
def _scorer(name: str):
    return import_reasoning_gym().create_dataset(name, seed=0, size=1)


def score_entry(task: dict, answer: str) -> float:
    """The generator's score of the extracted `answer` for the task's reasoning-gym entry."""
    entry = task["metadata"]["entry"]
    entry = {**entry, "metadata": gym_entries.decode(entry["metadata"])}
    return float(_scorer(entry["metadata"]["source_dataset"]).score_answer(answer, entry))
