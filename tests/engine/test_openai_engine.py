"""The openai backend against a real HTTP server: a small FastAPI app, run by uvicorn in a thread,
that fronts the builtin engine on the tiny random model."""

import pytest
import torch

from posttrain.engine.builtin.engine import BuiltinEngine
from posttrain.engine.interface import GenerationRequest, SamplingParams
from posttrain.engine.openai_engine import OpenAIEngine, OpenAIServerError
from posttrain.models.loading import load_model
from posttrain.models.token_ids import chat_prompt_ids

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from tests.openai_test_server import MODEL, free_port, running_server  # noqa: E402


@pytest.fixture(scope="module")
def server(tokenizer):
    with running_server(tokenizer) as url:
        yield url


@pytest.fixture(scope="module")
def direct(tokenizer):
    return BuiltinEngine(load_model("tiny-llama", seed=0), tokenizer, num_blocks=256)


def prompt(tokenizer, text):
    return chat_prompt_ids(tokenizer, [{"role": "user", "content": text}])


def test_generate_over_http_equals_the_builtin_engine(server, direct, tokenizer):
    engine = OpenAIEngine(server, MODEL, max_concurrency=3)
    params = SamplingParams(n=2, temperature=0.0, max_tokens=6)
    requests = [GenerationRequest(f"r{i}", prompt(tokenizer, "x" * (i + 1)), params) for i in range(3)]
    remote = engine.generate(requests)
    local = [c for r in requests for c in direct.generate([r])]
    assert [(c.request_id, c.sample_index) for c in remote] == [(f"r{i}", s) for i in range(3) for s in range(2)]
    for got, want in zip(remote, local):
        assert got.token_ids == want.token_ids and len(got.token_ids) >= 1
        assert got.logprobs == pytest.approx(want.logprobs, abs=1e-6)
        assert got.text == want.text and got.finish_reason == want.finish_reason
        assert got.prompt_token_ids == want.prompt_token_ids and got.version == 0


def test_token_ids_from_token_id_strings_or_retokenized(server, direct, tokenizer):
    request = [GenerationRequest("a", prompt(tokenizer, "Hi"), SamplingParams(temperature=0.0, max_tokens=5))]
    want = direct.generate(request)[0]
    exact = OpenAIEngine(server, "no-ids", extra_body={"return_tokens_as_token_ids": True}).generate(request)[0]
    assert exact.token_ids == want.token_ids and exact.logprobs == pytest.approx(want.logprobs, abs=1e-6)
    approx = OpenAIEngine(server, "no-ids", tokenizer=tokenizer).generate(request)[0]
    assert approx.token_ids == tokenizer.encode(approx.text, add_special_tokens=False)
    assert approx.logprobs in ([], pytest.approx(want.logprobs, abs=1e-6))
    bare = OpenAIEngine(server, "no-ids").generate(request)[0]
    assert bare.text == want.text and bare.token_ids == [] and bare.logprobs == []


def test_chat(server, direct, tokenizer):
    messages = [{"role": "user", "content": "Add 2 and 3."}]
    reply = OpenAIEngine(server + "/v1", MODEL).chat(messages, SamplingParams(temperature=0.0, max_tokens=6))
    want = direct.generate(
        [GenerationRequest("c", prompt(tokenizer, "Add 2 and 3."), SamplingParams(temperature=0.0, max_tokens=6))]
    )[0]
    assert reply.text == want.text and reply.token_ids == want.token_ids
    assert reply.logprobs == pytest.approx(want.logprobs, abs=1e-6)
    assert reply.prompt_token_ids == want.prompt_token_ids and reply.finish_reason == want.finish_reason
    with pytest.raises(ValueError, match="one completion"):
        OpenAIEngine(server, MODEL).chat(messages, SamplingParams(n=2))


def test_errors_name_the_url_and_5xx_is_retried(server, tokenizer):
    request = [GenerationRequest("a", prompt(tokenizer, "Hi"), SamplingParams(temperature=0.0, max_tokens=2))]
    dead = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(OpenAIServerError, match=f"cannot reach .*{dead}/v1/completions"):
        OpenAIEngine(dead, MODEL, backoff_s=0.01).generate(request)  # connection errors are retried too
    with pytest.raises(OpenAIServerError, match=r"/v1/completions answered HTTP 404: The model `nope` does not exist"):
        OpenAIEngine(server, "nope").generate(request)
    with pytest.raises(OpenAIServerError, match=r"did not answer within timeout_s=0.3"):
        OpenAIEngine(server, "slow", timeout_s=0.3).generate(request)
    flaky = OpenAIEngine(server, "flaky", backoff_s=0.01).generate(request)  # 503 once, then served
    assert len(flaky) == 1 and flaky[0].token_ids


def test_update_weights_is_refused(server):
    with pytest.raises(
        NotImplementedError, match="the openai backend serves a remote model; weights cannot be updated"
    ):
        OpenAIEngine(server, MODEL).update_weights([("w", torch.zeros(1))], version=1)
