"""A warm start on single-reply tasks (the scene domain): demonstrations are the prompt as a
rollout sends it plus the reference answer; rejection rounds sample replies; the run's summary
reports held-out mean reward and validity per stage with paired bootstrap intervals."""

import json

import pytest

from posttrain.pipeline.sft.demonstrations import DemonstrationFailed, answer_demonstrations
from posttrain.pipeline.sft.transcripts import read_transcripts
from posttrain.tasks.scene.source import tasks_from_spec
from tests.tasks.scene.test_scene_source import SCENE_CONFIG

SFT_TABLE = """
[sft]
demonstrations = 4
batch_size = 2
epochs = 2
lr = 3e-3
warmup_steps = 0
rejection_rounds = 1
rejection_tasks = 2
rejection_samples = 2
"""


def test_answer_demonstrations_are_the_rollout_prompt_and_the_reference_answer(tokenizer):
    from posttrain.pipeline.rollout import prompt_token_ids

    tasks = tasks_from_spec("scene:1,2:3")
    for task, transcript in zip(tasks, answer_demonstrations(tasks, tokenizer, "Be brief.")):
        (segment,) = transcript.segments
        assert segment["prompt_ids"] == prompt_token_ids(tokenizer, task, "Be brief.")
        assert segment["completion_ids"][-1] == tokenizer.eos_token_id
        assert tokenizer.decode(segment["completion_ids"][:-1]) == task.answer
        assert all(segment["completion_mask"]) and transcript.difficulty == task.metadata["difficulty"]
    broken = tasks[0].model_copy(update={"answer": '{"objects": []}'})
    with pytest.raises(DemonstrationFailed, match=f"task {broken.id}: its reference answer does not pass"):
        answer_demonstrations([broken], tokenizer, None)


def test_train_with_a_warm_start_on_scenes_reports_graded_held_out_results(tmp_path):
    from posttrain.pipeline.driver import train

    path = tmp_path / "scene.toml"
    path.write_text(SCENE_CONFIG.format(source="scene:1") + SFT_TABLE)
    summary = train(path, tmp_path / "run")
    demos = read_transcripts(tmp_path / "run" / "sft" / "demonstrations.jsonl")
    assert len(demos) == 4 and all(d.source == "demonstration" for d in demos)
    assert (tmp_path / "run" / "sft" / "accepted-1.jsonl").is_file()  # 8-token replies: none accepted
    graded = json.loads((tmp_path / "run" / "summary.json").read_text())["heldout_graded"]
    assert graded == summary["heldout_graded"]
    for metric in ("mean_reward", "validity"):
        entry = graded[metric]
        assert entry["n"] == 4 and set(entry) >= {"base", "sft", "rl", "sft_minus_base", "rl_minus_sft"}
        low, high = entry["rl_minus_sft"]["ci95"]
        assert low <= entry["rl_minus_sft"]["delta"] <= high
    assert graded["validity"]["base"] == 0.0  # 8 tokens hold no scene
