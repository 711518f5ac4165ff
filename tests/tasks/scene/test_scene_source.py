"""The scene domain as a task source: `scene:<difficulty>` in [[domains]] (held-out items,
training), and `posttrain eval --tasks scene:...`."""

import json
import tomllib

import pytest

from posttrain.config import load_config, parse_config
from posttrain.errors import ConfigError, TaskSourceError
from posttrain.pipeline.build import build_mixture, build_source
from posttrain.tasks.scene.source import SceneSource, tasks_from_spec
from posttrain.tasks.sources import content_key
from posttrain.tasks.verifiers import score

SCENE_CONFIG = """
seed = 0
threads = 1

[model]
name = "tiny-llama"

[[domains]]
name = "scene"
source = "{source}"
heldout = 4

[rollout]
prompts_per_step = 2
group_size = 2
max_new_tokens = 8

[algorithm]
dynamic_sampling = false

[optim]
micro_batch_tokens = 1024

[train]
steps = 1
checkpoint_every = 1
keep_checkpoints = 1
"""


def write_config(tmp_path, source="scene:1,2"):
    path = tmp_path / "scene.toml"
    path.write_text(SCENE_CONFIG.format(source=source))
    return path


def test_a_scene_domain_has_held_out_items_apart_from_training_and_verifiable_answers(tmp_path):
    config = load_config(write_config(tmp_path))
    mixture = build_mixture(config, tmp_path)
    heldout = mixture.heldout()
    training = mixture.sample_step(0, 16)
    assert len(heldout) == 4 and {t.metadata["difficulty"] for t in heldout} == {1, 2}
    assert not {content_key(t) for t in heldout} & {content_key(t) for t in training}
    for task in heldout + training:
        assert task.kind == "answer" and task.verifier == "scene"
        assert "Answer with JSON only" in task.instruction
        oracle = score(task.answer, task)
        assert oracle.passed and oracle.value == 1.0 and oracle.details["valid"]
        nothing = score("", task)
        assert nothing.value == 0.0 and not nothing.details["valid"]


def test_bad_scene_sources_are_refused_naming_the_file_and_field(tmp_path):
    with pytest.raises(ConfigError, match=r"scene.toml: domains\[0\]\.source: scene: takes difficulties"):
        load_config(write_config(tmp_path, "scene:hard"))
    config = load_config(write_config(tmp_path, "scene:1,9"))
    with pytest.raises(TaskSourceError, match="domain 'scene': difficulty must be an integer from 1 to 6, not 9"):
        build_source(config.domains[0], tmp_path)
    data = tomllib.loads(write_config(tmp_path).read_text())
    data["domains"][0]["kind"] = "terminal"
    with pytest.raises(ConfigError, match='kind = "terminal" needs'):
        parse_config(data)


def test_items_spread_over_the_difficulties_and_are_reproducible():
    source = SceneSource("s", [1, 3], seed=5, size=10)
    assert [source.get(i).metadata["difficulty"] for i in range(4)] == [1, 3, 1, 3]
    assert source.get(7) == SceneSource("s", [1, 3], seed=5, size=10).get(7)
    assert source.get(7).instruction != SceneSource("s", [1, 3], seed=6, size=10).get(7).instruction


def test_eval_specs():
    tasks = tasks_from_spec("scene:2:3:1")
    assert len(tasks) == 3 and all(t.metadata["difficulty"] == 2 for t in tasks)
    assert len(tasks_from_spec("scene:1")) == 20
    for bad, message in [("scene:", "names no difficulty"), ("scene:1:x", "integers"), ("scene:1:0", "at least 1")]:
        with pytest.raises(TaskSourceError, match=message):
            tasks_from_spec(bad)


def test_eval_oracle_passes_and_nop_scores_zero(tokenizer, tmp_path):
    from posttrain.agent.policies import NopPolicy, OraclePolicy
    from posttrain.evaluate.runner import run_eval

    tasks = tasks_from_spec("scene:1,2,3:6")
    oracle = run_eval(tasks, "oracle", OraclePolicy(), tokenizer, tmp_path / "oracle")
    nop = run_eval(tasks, "nop", NopPolicy(), tokenizer, tmp_path / "nop")
    assert oracle["pass_at_1"] == 1.0 and oracle["mean_reward"] == 1.0
    assert nop["pass_at_1"] == 0.0 and nop["mean_reward"] == 0.0


def test_a_training_step_on_the_scene_domain(tmp_path):
    from posttrain.pipeline.driver import train

    out = tmp_path / "run"
    summary = train(write_config(tmp_path), out)
    assert summary["steps"] == 1 and summary["n_heldout"] == 4
    record = json.loads((out / "metrics.jsonl").read_text().splitlines()[0])
    assert record["reward/scene"] == 0.0  # an untrained tiny model writes no valid scene
    assert set(summary["eval_before"]["per_domain"]) == {"scene"}
