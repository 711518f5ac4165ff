"""A stored sample of a scene domain as the scene page (`posttrain scene render`'s page): the task
rebuilt from the run's resolved config (a scene source is seeded, so item i is the same task it
was in training), the sample's reply scored again and drawn beside its constraint results."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from posttrain.config import load_config
from posttrain.errors import PosttrainError
from posttrain.pipeline.build import build_source
from posttrain.tasks.scene.gate import read_answer
from posttrain.tasks.scene.page import render_page
from posttrain.tasks.scene.schema import SceneAnswer
from posttrain.tasks.scene.scoring import score_reply
from posttrain.tasks.scene.source import PREFIX


def scene_page_of_sample(run_dir: Path, sample: dict[str, Any]) -> str:
    config = load_config(run_dir / "config.toml")
    domain = next((d for d in config.domains if d.name == sample["domain"]), None)
    if domain is None or not domain.source.startswith(PREFIX):
        raise PosttrainError(f"sample {sample['id']} is from domain {sample['domain']!r}, not a scene: domain")
    source = build_source(domain, run_dir)
    index = int(sample["task_id"].rsplit("/", 1)[1])
    task = source.scene(index)
    score = score_reply(sample["text"], task)
    answer = score.answer or read_answer(sample["text"]).answer or SceneAnswer(objects=[])
    title = f"{sample['task_id']} · step {sample['step']} · sample {sample['sample_index']}"
    return render_page(answer, task, score, title)
