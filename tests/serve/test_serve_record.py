"""`posttrain serve --record DIR`: every finished chat (whole or streamed, with or without a
tool call) is a row of DIR/traces.jsonl holding the exact token ids and logprobs the engine
produced, in the chat-data format the SFT stage reads back to the same prompt tokens; a row of
another tokenizer is named and left out."""

import json

import httpx
import pytest

from posttrain.models.loading import load_tokenizer
from posttrain.pipeline.sft.conversations import chat_transcripts, read_conversation_rows
from posttrain.serve.server import ServerSettings
from tests.serve.conftest import start_server

QUESTION = [{"role": "user", "content": "Name a colour."}]
TOOL = {
    "type": "function",
    "function": {"name": "bash", "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}},
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    directory = tmp_path_factory.mktemp("traces")
    running, stop = start_server(ServerSettings("smollm2-135m", max_concurrency=2, record_dir=directory))
    try:
        whole = httpx.post(
            f"{running.base_url}/chat/completions",
            json={
                "model": "smollm2-135m",
                "messages": QUESTION,
                "temperature": 0,
                "max_tokens": 12,
                "logprobs": True,
                "return_token_ids": True,
            },
            timeout=300,
        ).json()
        with httpx.stream(
            "POST",
            f"{running.base_url}/chat/completions",
            json={"model": "smollm2-135m", "messages": QUESTION, "temperature": 0, "max_tokens": 12, "stream": True},
            timeout=300,
        ) as response:
            streamed = "".join(
                (json.loads(line[6:])["choices"] or [{}])[0].get("delta", {}).get("content") or ""
                for line in response.iter_lines()
                if line.startswith("data: {")
            )
        forced = httpx.post(
            f"{running.base_url}/chat/completions",
            json={
                "model": "smollm2-135m",
                "messages": [{"role": "user", "content": "List /app."}],
                "tools": [TOOL],
                "tool_choice": "required",
                "temperature": 0,
                "max_tokens": 40,
            },
            timeout=300,
        ).json()
    finally:
        stop()
    rows = [json.loads(line) for line in (directory / "traces.jsonl").read_text().splitlines()]
    return directory, rows, whole, streamed, forced


def test_each_finished_chat_is_one_row_with_the_engines_tokens_and_logprobs(recorded):
    _, rows, whole, streamed, forced = recorded
    assert len(rows) == 3
    first, second, third = rows
    choice = whole["choices"][0]
    assert (
        first["completion_token_ids"] == choice["token_ids"] and first["prompt_token_ids"] == choice["prompt_token_ids"]
    )
    assert first["logprobs"] == pytest.approx([t["logprob"] for t in choice["logprobs"]["content"]])
    assert first["messages"][-1] == {"role": "assistant", "content": choice["message"]["content"]}
    assert first["response"] == choice["message"] and first["finish_reason"] == choice["finish_reason"]
    assert first["model"] == "smollm2-135m" and first["request_id"] == whole["id"] and len(first["tokenizer"]) == 16
    # the streamed reply is recorded as the client received it, with the same greedy tokens
    assert second["messages"][-1]["content"] == streamed == choice["message"]["content"]
    assert second["completion_token_ids"] == first["completion_token_ids"]
    # a forced call: the tools in the system message the model saw, the call in OpenAI's shape
    assert "<tools>" in third["messages"][0]["content"] and third["messages"][-1]["content"].startswith("<tool_call>")
    assert third["response"] == forced["choices"][0]["message"], (third, forced)


def test_the_rows_train_as_chat_data_on_the_prompt_the_engine_saw(recorded):
    directory, rows, *_ = recorded
    path = directory / "traces.jsonl"
    good, problems = read_conversation_rows([path])
    assert len(good) == 3 and problems == []
    tokenizer = load_tokenizer("smollm2-135m")
    transcripts = chat_transcripts([path], tokenizer)
    for transcript, row in zip(transcripts, rows):
        segment = transcript.segments[0]
        if row["messages"][-1]["content"].startswith("<tool_call>"):
            # a forced call's opening was the server's, in the prompt; the row has it in the reply
            assert row["prompt_token_ids"][: len(segment["prompt_ids"])] == segment["prompt_ids"]
        else:
            assert segment["prompt_ids"] == row["prompt_token_ids"]
        trained = [t for t, m in zip(segment["completion_ids"], segment["completion_mask"]) if m]
        assert tokenizer.decode(trained).startswith(row["messages"][-1]["content"])


def test_a_row_of_another_tokenizer_is_named_and_left_out(recorded, tmp_path):
    _, rows, *_ = recorded
    path = tmp_path / "mixed.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [rows[0], {**rows[1], "tokenizer": "0123456789abcdef"}]))
    said = []
    transcripts = chat_transcripts([path], load_tokenizer("smollm2-135m"), say=said.append)
    assert len(transcripts) == 1
    assert said == [
        f"[sft] chat_data: skipping {path}:2: tokenizer: recorded with tokenizer 0123456789abcdef, "
        f"this model's is {rows[0]['tokenizer']}"
    ]


def test_an_unwritable_record_dir_fails_before_the_model_loads(tmp_path):
    from posttrain.errors import PosttrainError
    from posttrain.serve.server import build_server

    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(PosttrainError, match=r"--record .*file/sub: cannot write"):
        build_server(ServerSettings("no-such-model", record_dir=blocker / "sub"))
