"""Two real training steps on the user's own data and rewards: a verl parquet domain scored by
a built-in verifier plus a custom reward with weights, and a saved `datasets` domain whose
custom reward raises, hangs, or returns nonsense on some rows: those samples are recorded as
reward errors with their messages, and the run goes on and counts them."""

import json
import shutil
import sqlite3
from pathlib import Path

import datasets
import pyarrow
import pyarrow.parquet
import pytest

from posttrain.errors import PosttrainError
from posttrain.pipeline.driver import train

CONFIG = """
seed = 3
threads = 1

[model]
name = "tiny-llama"

[[domains]]
name = "gsm"
source = "parquet:gsm.parquet"
heldout = 2
verifier = ["exact", "python:user_rewards:length_reward"]
verifier_weights = [1.0, 0.5]

[[domains]]
name = "flaky"
source = "hf-dataset:flaky"
weight = 2.0
heldout = 1
prompt_column = "question"
answer_column = "solution"
verifier = "python:user_rewards:misbehaving"
reward_timeout_s = 1.0

[rollout]
prompts_per_step = 4
group_size = 2
max_new_tokens = 4

[algorithm]
dynamic_sampling = false

[optim]
lr = 1e-3
micro_batch_tokens = 256

[train]
steps = 2
checkpoint_every = 2
"""


def write_run_inputs(directory: Path) -> Path:
    rows = [
        {
            "data_source": "openai/gsm8k",
            "prompt": [{"role": "user", "content": f"What is {i} + {i}?"}],
            "reward_model": {"style": "rule", "ground_truth": str(2 * i)},
            "extra_info": {"index": i},
        }
        for i in range(6)
    ]
    pyarrow.parquet.write_table(pyarrow.Table.from_pylist(rows), directory / "gsm.parquet")
    kinds = ["raise", "range", "text", "raise", "range", "hang", "text", "raise"]
    flaky = {"question": [f"Question {i}" for i in range(len(kinds))], "solution": kinds}
    datasets.Dataset.from_dict(flaky).save_to_disk(str(directory / "flaky"))
    shutil.copy(Path(__file__).parents[1] / "tasks" / "user_rewards.py", directory / "user_rewards.py")
    (directory / "run.toml").write_text(CONFIG)
    return directory / "run.toml"


def test_two_steps_on_parquet_and_dataset_sources_with_custom_rewards(tmp_path):
    out = tmp_path / "run"
    train(write_run_inputs(tmp_path), out)
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [1, 2]
    sampled = {task_id.split("/")[0] for r in records for task_id in r["task_ids"]}
    assert sampled == {"gsm", "flaky"}
    flaky_samples = sum(2 for r in records for task_id in r["task_ids"] if task_id.startswith("flaky/"))
    # every flaky row's reward fails one way or another: each of its samples is an error
    assert sum(r["reward_errors"] for r in records) == flaky_samples
    assert all("reward_extra/chars" in r for r in records if any(t.startswith("gsm/") for t in r["task_ids"]))
    rows = sqlite3.connect(out / "trajectories.sqlite").execute("SELECT task_id, reward, details FROM trajectories")
    errors = {}
    for task_id, reward, details in rows:
        details = json.loads(details)
        if task_id.startswith("flaky/"):
            assert reward == 0.0
            [message] = details["reward_errors"]
            errors[message.split(": ", 1)[1].split(" ")[0]] = message
        else:
            assert set(details["rewards"]) == {"exact", "python:user_rewards:length_reward"}
            assert "reward_errors" not in details
    assert set(errors) <= {"raised", "returned", "timed"} and len(errors) >= 2, errors
    assert (out / "checkpoints" / "step-2" / "model.safetensors").is_file()


def empty_prompt_in_row_4(directory: Path) -> str:
    rows = pyarrow.parquet.read_table(directory / "gsm.parquet").to_pylist()
    rows[4]["prompt"] = []
    pyarrow.parquet.write_table(pyarrow.Table.from_pylist(rows), directory / "gsm.parquet")
    return f"{directory / 'gsm.parquet'}: row 4: column 'prompt': expected text or chat messages"


def a_reward_function_that_does_not_exist(directory: Path) -> str:
    config = directory / "run.toml"
    config.write_text(config.read_text().replace("user_rewards:length_reward", "user_rewards:absent"))
    return "domain 'gsm': verifier 'python:user_rewards:absent': module user_rewards has no function 'absent'"


@pytest.mark.parametrize("spoil", [empty_prompt_in_row_4, a_reward_function_that_does_not_exist])
def test_bad_input_stops_the_run_before_it_writes_anything(tmp_path, spoil):
    config = write_run_inputs(tmp_path)
    message = spoil(tmp_path)
    with pytest.raises(PosttrainError) as caught:
        train(config, tmp_path / "run")
    assert str(caught.value).startswith(message)
    assert not (tmp_path / "run").exists()  # refused before the run directory is written
