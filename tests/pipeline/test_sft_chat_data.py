"""`[sft] chat_data`: users' OpenAI-format conversations, rendered with the chat template and
trained on the assistant turns only; bad rows named by file, row and field and skipped, unless
--strict; `posttrain sft` trains on them alone."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from posttrain.errors import PosttrainError
from posttrain.models.loading import load_tokenizer
from posttrain.models.token_ids import chat_prompt_ids
from posttrain.pipeline.sft.conversations import conversation_transcript, read_conversation_rows

CLI = [sys.executable, "-m", "posttrain.cli"]

CHATS = [
    {"messages": [{"role": "user", "content": "Hi there"}, {"role": "assistant", "content": "Hello!"}]},
    {
        "messages": [
            {"role": "system", "content": "Answer with a number."},
            {"role": "user", "content": "2+2?"},
            {"role": "assistant", "content": "4"},
            {"role": "user", "content": "And 3+3?"},
            {"role": "assistant", "content": "6"},
        ],
        "tools": [],
    },
]


def write_rows(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def tokenizer():
    return load_tokenizer("tiny-llama")


def test_bad_rows_are_named_by_file_row_and_field(tmp_path):
    path = write_rows(
        tmp_path / "chats.jsonl",
        [
            CHATS[0],
            "{oops",
            ["not", "an", "object"],
            {"prompt": "hi"},
            {"messages": [{"role": "user", "content": "only a question"}]},
            {"messages": [{"role": "robot", "content": "x"}, {"role": "assistant", "content": "y"}]},
            {"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": " "}]},
            {"messages": CHATS[0]["messages"], "tools": "bash"},
            CHATS[1],
        ],
    )
    rows, problems = read_conversation_rows([path])
    assert [where for where, _ in rows] == [f"{path}:1", f"{path}:9"]
    assert problems == [
        f"{path}:2: not valid JSON (Expecting property name enclosed in double quotes)",
        f"{path}:3: not a JSON object with messages",
        f"{path}:4: messages: missing or not a list of messages",
        f"{path}:5: messages: no assistant turn to learn from",
        f"{path}:6: messages[0].role: expected one of system, user, assistant, tool",
        f"{path}:7: messages[1].content: an empty assistant turn",
        f"{path}:8: tools: expected a list of function schemas",
    ]
    with pytest.raises(PosttrainError, match="--strict"):
        read_conversation_rows([path], strict=True)


def test_only_the_assistant_turns_are_trained_on(tokenizer):
    transcript = conversation_transcript(tokenizer, "chats.jsonl:2", CHATS[1])
    (segment,) = transcript.segments
    # the prompt is the conversation up to the first assistant turn, with its header
    assert segment["prompt_ids"] == chat_prompt_ids(tokenizer, CHATS[1]["messages"][:2])
    trained = [t for t, m in zip(segment["completion_ids"], segment["completion_mask"]) if m]
    masked = [t for t, m in zip(segment["completion_ids"], segment["completion_mask"]) if not m]
    assert tokenizer.decode(trained) == "4<|im_end|>\n6<|im_end|>\n"
    assert tokenizer.decode(masked) == "<|im_start|>user\nAnd 3+3?<|im_end|>\n<|im_start|>assistant\n"
    assert transcript.source == "chat" and transcript.trained_tokens == len(trained)


# a domain is required by a run config; with demonstrations = 0 and evaluate = false it is unused
CONFIG = """
seed = 0
threads = 1
model = { name = "tiny-llama" }
domains = [{ name = "addition", source = "reasoning-gym:basic_arithmetic" }]
[sft]
demonstrations = 0
chat_data = ["chats.jsonl"]
batch_size = 2
epochs = 2
lr = 1e-3
warmup_steps = 0
rejection_rounds = 0
evaluate = false
"""


def run_cli(args) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run(CLI + args, env=env, capture_output=True, text=True, timeout=600)


def test_posttrain_sft_trains_on_chat_data_alone_and_strict_refuses_a_bad_row(tmp_path):
    write_rows(tmp_path / "chats.jsonl", [*CHATS, CHATS[0], {"messages": [{"role": "user", "content": "q"}]}])
    config = tmp_path / "sft.toml"
    config.write_text(CONFIG)
    strict = run_cli(["sft", str(config), "--out", str(tmp_path / "strict"), "--strict"])
    assert strict.returncode != 0 and "chats.jsonl:4: messages: no assistant turn" in strict.stderr
    assert not (tmp_path / "strict").exists()
    result = run_cli(["sft", str(config), "--out", str(tmp_path / "run")])
    assert result.returncode == 0, result.stderr[-3000:]
    assert "chats.jsonl:4: messages: no assistant turn" in result.stdout + result.stderr
    steps = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    steps = [s for s in steps if "nll" in s]
    assert [s["transcripts"] for s in steps] == [2, 1, 2, 1]
    assert steps[-1]["nll"] < steps[0]["nll"]
    assert (tmp_path / "run" / "model" / "config.json").is_file()
    # a token budget instead of a count: all three conversations fit one step each epoch
    config.write_text(CONFIG.replace("batch_size = 2", "batch_tokens = 100000"))
    result = run_cli(["sft", str(config), "--out", str(tmp_path / "budget")])
    assert result.returncode == 0, result.stderr[-3000:]
    steps = [json.loads(line) for line in (tmp_path / "budget" / "metrics.jsonl").read_text().splitlines()]
    assert [s["transcripts"] for s in steps if "nll" in s] == [3, 3]


def test_parquet_and_saved_datasets_tables_read_like_jsonl(tmp_path, tokenizer):
    import datasets
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [*CHATS, {"messages": [{"role": "user", "content": "no reply"}]}]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "chats.parquet")
    datasets.Dataset.from_list(rows).save_to_disk(str(tmp_path / "saved"))
    jsonl, _ = read_conversation_rows([write_rows(tmp_path / "chats.jsonl", rows)])
    for path in (tmp_path / "chats.parquet", tmp_path / "saved"):
        found, problems = read_conversation_rows([path])
        assert problems == [f"{path}:3: messages: no assistant turn to learn from"]
        # a table's missing fields (tools, a null tool_calls) are dropped, so the rows render the same
        for (_, row), (_, expected) in zip(found, jsonl):
            assert conversation_transcript(tokenizer, "t", row).segments == (
                conversation_transcript(tokenizer, "t", expected).segments
            )
