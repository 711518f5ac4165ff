"""Preference training (posttrain preference): rows read and checked with bad ones named by
file, row and field; pairs rendered with the chat template with only the responses trained on;
a DPO and a SimPO run writing their run directory; a resumed run training on the same batches."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from posttrain.errors import ConfigError, PosttrainError
from posttrain.models.loading import load_tokenizer
from posttrain.models.token_ids import chat_prompt_ids
from posttrain.pipeline.preference.pairs import read_preference_rows, tokenize_pair
from posttrain.pipeline.preference.stage import check_preference, plan_pair_batches, preference_checked

CLI = [sys.executable, "-m", "posttrain.cli"]

GOOD = [
    {"prompt": "What is 2+2?", "chosen": "4", "rejected": "5"},
    {
        "prompt": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Capital of France?"}],
        "chosen": [{"role": "assistant", "content": "Paris."}],
        "rejected": "London, I think.",
    },
    {"prompt": "Colour of the sky?", "chosen": "Blue.", "rejected": "Green, as everyone knows."},
    {"prompt": "Say yes.", "chosen": {"role": "assistant", "content": "Yes."}, "rejected": "No."},
]


def write_rows(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def write_config(root: Path, extra: str = "", data: str = "pairs.jsonl") -> Path:
    config = root / "pref.toml"
    config.write_text(
        f'seed = 0\nthreads = 1\n[model]\nname = "tiny-llama"\n[preference]\ndata = ["{data}"]\n'
        f"batch_size = 2\nlr = 1e-4\ncheckpoint_every = 1\n{extra}"
    )
    return config


def test_bad_rows_are_named_by_file_row_and_field_and_the_rest_are_used(tmp_path):
    path = write_rows(
        tmp_path / "pairs.jsonl",
        [
            GOOD[0],
            {"prompt": "hi", "chosen": "hello"},
            {"prompt": "hi", "chosen": "  ", "rejected": "no"},
            "not json",
            [1, 2],
            {"prompt": "hi", "chosen": [{"role": "user", "content": "x"}], "rejected": "no"},
            {"prompt": "", "chosen": "a", "rejected": "b"},
            GOOD[1],
        ],
    )
    rows, problems = read_preference_rows([path])
    assert [r.where for r in rows] == [f"{path}:1", f"{path}:8"]
    assert problems == [
        f"{path}:2: rejected: missing",
        f"{path}:3: chosen: empty",
        f"{path}:4: not valid JSON (Expecting value)",
        f"{path}:5: not a JSON object with prompt, chosen and rejected",
        f"{path}:6: chosen: [0]: role 'user'; a response holds assistant messages",
        f"{path}:7: prompt: empty",
    ]
    with pytest.raises(PosttrainError, match="--strict") as error:
        read_preference_rows([path], strict=True)
    assert f"{path}:2: rejected: missing" in str(error.value)


def test_a_file_with_no_usable_row_and_a_missing_file_are_errors(tmp_path):
    path = write_rows(tmp_path / "pairs.jsonl", [{"prompt": "a"}])
    with pytest.raises(PosttrainError, match="no usable preference rows"):
        read_preference_rows([path])
    with pytest.raises(PosttrainError, match="not found"):
        read_preference_rows([tmp_path / "absent.jsonl"])


def test_pairs_are_the_chat_prompt_then_the_assistant_turn(tmp_path):
    tokenizer = load_tokenizer("tiny-llama")
    rows, _ = read_preference_rows([write_rows(tmp_path / "pairs.jsonl", GOOD[1:2])])
    pair = tokenize_pair(tokenizer, rows[0])
    assert pair.prompt_ids == chat_prompt_ids(tokenizer, rows[0].prompt)
    chosen = tokenizer.decode(pair.chosen_ids)
    assert chosen.startswith("Paris.") and chosen.rstrip().endswith("<|im_end|>")
    assert tokenizer.decode(pair.rejected_ids).startswith("London, I think.")


def test_the_batch_plan_is_seeded_and_file_order_without_shuffle():
    assert plan_pair_batches(5, 2, 1, shuffle=False, seed=0) == [[0, 1], [2, 3], [4]]
    shuffled = plan_pair_batches(5, 2, 2, shuffle=True, seed=3)
    assert shuffled == plan_pair_batches(5, 2, 2, shuffle=True, seed=3)
    assert sorted(i for b in shuffled[:3] for i in b) == list(range(5)) and len(shuffled) == 6


def test_the_config_is_checked_before_anything_is_written(tmp_path):
    write_rows(tmp_path / "pairs.jsonl", GOOD)
    with pytest.raises(ConfigError, match=r"preference\.loss"):
        check_preference(write_config(tmp_path, 'loss = "ppo"\n'), tmp_path / "run", False)
    with pytest.raises(ConfigError, match=r"preference\.beat: unknown key \(did you mean beta\?\)"):
        check_preference(write_config(tmp_path, "beat = 1.0\n"), tmp_path / "run", False)
    with pytest.raises(PosttrainError, match="absent.jsonl: preference data file not found"):
        check_preference(write_config(tmp_path, data="absent.jsonl"), tmp_path / "run", False)
    (tmp_path / "bare.toml").write_text('[model]\nname = "tiny-llama"\n')
    with pytest.raises(ConfigError, match="preference: Field required"):
        check_preference(tmp_path / "bare.toml", tmp_path / "run", False)
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "x").write_text("")
    with pytest.raises(PosttrainError, match="not empty"):
        check_preference(write_config(tmp_path), tmp_path / "busy", False)
    assert not (tmp_path / "run").exists()


def test_dpo_run_writes_its_directory_and_a_resume_continues_on_the_same_batches(tmp_path):
    write_rows(tmp_path / "pairs.jsonl", GOOD)
    # the whole run: two epochs of two batches
    full = preference_checked(check_preference(write_config(tmp_path, "epochs = 2\n"), tmp_path / "full", False))
    assert full["steps"] == 4 and full["pairs"] == 4 and full["skipped_rows"] == 0
    assert full["first_loss"] == pytest.approx(0.6931, abs=1e-3)
    out = tmp_path / "full"
    assert (out / "model" / "config.json").is_file() and (out / "checkpoints" / "step-4" / "config.json").is_file()
    assert json.loads((out / "summary.json").read_text()) == full
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [1, 2, 3, 4] and records[-1]["accuracy"] == 1.0
    # the same run stopped after the first epoch, then resumed with both
    first = preference_checked(check_preference(write_config(tmp_path), tmp_path / "part", False))
    assert first["steps"] == 2
    config = tmp_path / "part" / "config.toml"
    config.write_text(config.read_text().replace("epochs = 1", "epochs = 2"))
    resumed = preference_checked(check_preference(None, tmp_path / "part", True))
    assert resumed["last_loss"] == pytest.approx(full["last_loss"], abs=1e-6)
    steps = [json.loads(line)["step"] for line in (tmp_path / "part" / "metrics.jsonl").read_text().splitlines()]
    assert steps == [1, 2, 3, 4]


def test_simpo_and_the_cli_with_a_bad_row_and_strict(tmp_path):
    write_rows(tmp_path / "pairs.jsonl", [*GOOD, {"prompt": "x", "rejected": "y"}])
    config = write_config(tmp_path, 'loss = "simpo"\nbeta = 2.0\n')
    strict = subprocess.run(
        [*CLI, "preference", str(config), "--out", str(tmp_path / "s"), "--strict"], text=True, capture_output=True
    )
    assert strict.returncode != 0 and "pairs.jsonl:5: chosen: missing" in strict.stderr + strict.stdout
    assert not (tmp_path / "s").exists()
    run = subprocess.run(
        [*CLI, "preference", str(config), "--out", str(tmp_path / "r")], text=True, capture_output=True
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "pairs.jsonl:5: chosen: missing" in run.stderr + run.stdout
    summary = json.loads(run.stdout[run.stdout.index("{") :])
    assert summary["loss"] == "simpo" and summary["pairs"] == 4 and summary["skipped_rows"] == 1
    assert (tmp_path / "r" / "model" / "config.json").is_file()


def test_a_parquet_file_of_pairs_reads_like_jsonl(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [GOOD[0], GOOD[2], {"prompt": "a", "chosen": "b", "rejected": None}]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "pairs.parquet")
    found, problems = read_preference_rows([tmp_path / "pairs.parquet"])
    jsonl, _ = read_preference_rows([write_rows(tmp_path / "pairs.jsonl", rows[:2])])
    assert [(r.prompt, r.chosen, r.rejected) for r in found] == [(r.prompt, r.chosen, r.rejected) for r in jsonl]
    assert problems == [f"{tmp_path / 'pairs.parquet'}:3: rejected: missing"]


def test_the_example_config_and_its_pairs_check_clean(tmp_path):
    example = Path(__file__).parents[2] / "examples" / "preference.toml"
    checked = check_preference(example, tmp_path / "run", False, strict=True)
    assert checked.config.model.name == "smollm2-135m" and len(checked.rows) == 12 and checked.problems == []
