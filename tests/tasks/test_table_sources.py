"""parquet: (verl's layout) and hf-dataset: (save_to_disk folders and local data files) sources,
with column mapping; bad rows reported with the file, the row and the column."""

import datasets
import pyarrow
import pyarrow.parquet
import pytest

from posttrain.config import DomainConfig
from posttrain.errors import TaskSourceError
from posttrain.pipeline.build import build_source


def verl_rows(n=4):
    return [
        {
            "data_source": "openai/gsm8k" if i % 2 == 0 else "math",
            "prompt": [{"role": "user", "content": f"What is {i} + {i}?"}],
            "ability": "math",
            "reward_model": {"style": "rule", "ground_truth": str(2 * i)},
            "extra_info": {"split": "train", "index": i},
        }
        for i in range(n)
    ]


def write_parquet(path, rows):
    pyarrow.parquet.write_table(pyarrow.Table.from_pylist(rows), path)
    return path


def test_a_verl_parquet_file_becomes_chat_tasks_with_ground_truth_and_data_source(tmp_path):
    write_parquet(tmp_path / "train.parquet", verl_rows())
    source = build_source(DomainConfig(name="gsm", source="parquet:train.parquet"), tmp_path)
    assert len(source) == 4
    task = source.get(3)
    assert task.instruction == [{"role": "user", "content": "What is 3 + 3?"}]
    assert task.answer == "6" and task.verifier == "exact" and task.id == "gsm/3"
    assert task.metadata["data_source"] == "math" and task.metadata["extra_info"] == {"split": "train", "index": 3}
    only = build_source(
        DomainConfig(name="gsm", source="parquet:train.parquet", data_sources=["openai/gsm8k"]), tmp_path
    )
    assert [t.answer for t in only.tasks] == ["0", "4"]


def test_bad_parquet_rows_are_reported_with_file_row_and_column(tmp_path):
    rows = verl_rows(5)
    rows[1]["prompt"] = [{"role": "user", "text": "no content key"}]
    rows[3]["reward_model"] = {"style": "rule", "ground_truth": None}
    path = write_parquet(tmp_path / "bad.parquet", rows)
    with pytest.raises(TaskSourceError) as caught:
        build_source(DomainConfig(name="gsm", source="parquet:bad.parquet"), tmp_path)
    lines = str(caught.value).splitlines()
    assert lines[0].startswith(f"{path}: row 1: column 'prompt': expected chat messages")
    assert lines[1] == f"{path}: row 3: column 'reward_model.ground_truth': empty ground truth"
    assert len(lines) == 2


@pytest.mark.parametrize(
    "setup, fields, message",
    [
        (lambda p: write_parquet(p / "t.parquet", verl_rows()), {"prompt_column": "question"}, "no column 'question'"),
        (lambda p: (p / "t.parquet").write_text("not parquet"), {}, "not a readable parquet file"),
        (lambda p: None, {}, "no such parquet file"),
        (lambda p: write_parquet(p / "t.parquet", verl_rows()), {"data_sources": ["nope"]}, "no row has a data_source"),
    ],
)
def test_unreadable_parquet_sources_name_the_file(tmp_path, setup, fields, message):
    setup(tmp_path)
    with pytest.raises(TaskSourceError, match=message):
        build_source(DomainConfig(name="d", source="parquet:t.parquet", **fields), tmp_path)


def test_a_saved_dataset_dict_with_column_mapping(tmp_path):
    rows = {"question": ["2 + 2?", "3 + 3?", "4 + 4?"], "solution": ["4", "6", "8"], "origin": ["a", "b", "a"]}
    datasets.DatasetDict({"test": datasets.Dataset.from_dict(rows)}).save_to_disk(str(tmp_path / "ds"))
    cfg = DomainConfig(
        name="arith",
        source="hf-dataset:ds",
        split="test",
        prompt_column="question",
        answer_column="solution",
        data_source_column="origin",
        prompt_template="Compute {question}",
    )
    source = build_source(cfg, tmp_path)
    assert [(t.instruction, t.answer, t.metadata["data_source"]) for t in source.tasks][1] == (
        "Compute 3 + 3?",
        "6",
        "b",
    )
    with pytest.raises(TaskSourceError, match=r"no split 'train'; the dataset has \['test'\]"):
        build_source(cfg.model_copy(update={"split": "train"}), tmp_path)


def test_a_local_jsonl_data_file_and_its_bad_rows(tmp_path):
    (tmp_path / "data.jsonl").write_text('{"prompt": "1 + 1?", "answer": "2"}\n{"prompt": "", "answer": "0"}\n')
    with pytest.raises(TaskSourceError, match=r"data.jsonl: row 1: column 'prompt': empty prompt"):
        build_source(DomainConfig(name="d", source="hf-dataset:data.jsonl"), tmp_path)
    (tmp_path / "data.jsonl").write_text('{"prompt": "1 + 1?", "answer": "2"}\n')
    assert build_source(DomainConfig(name="d", source="hf-dataset:data.jsonl"), tmp_path).get(0).answer == "2"
    with pytest.raises(TaskSourceError, match="unknown data file type '.txt'"):
        (tmp_path / "data.txt").write_text("x")
        build_source(DomainConfig(name="d", source="hf-dataset:data.txt"), tmp_path)


def test_column_keys_need_a_table_source():
    with pytest.raises(ValueError, match="apply to parquet: and hf-dataset: sources"):
        DomainConfig(name="d", source="jsonl:x.jsonl", answer_column="gt")
