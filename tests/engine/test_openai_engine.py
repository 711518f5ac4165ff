"""The openai backend against a real HTTP server: a small FastAPI app, run by uvicorn in a thread,
that fronts the builtin engine on the tiny random model."""

import socket
import threading
import time

import pytest
import torch

from posttrain.engine.builtin.engine import BuiltinEngine
from posttrain.engine.interface import GenerationRequest, SamplingParams
from posttrain.engine.openai_engine import OpenAIEngine, OpenAIServerError
from posttrain.train.model_loading import load_model

fastapi = pytest.importorskip("fastapi")
uvicorn = pytest.importorskip("uvicorn")

MODEL = "tiny"


def make_app(engine: BuiltinEngine, tokenizer):
    app = fastapi.FastAPI()
    calls = {"flaky": 0}

    def check_model(body: dict) -> None:
        model = body.get("model")
        if model == "flaky":
            calls["flaky"] += 1
            if calls["flaky"] == 1:
                raise fastapi.HTTPException(503, "warming up")
        elif model == "slow":
            time.sleep(1.5)
        elif model not in (MODEL, "no-ids"):
            raise fastapi.HTTPException(404, f"The model `{model}` does not exist.")

    def params_of(body: dict, n: int) -> SamplingParams:
        return SamplingParams(n=n, temperature=body.get("temperature", 1.0), top_p=body.get("top_p", 1.0),
                              top_k=body.get("top_k", 0), max_tokens=body.get("max_tokens", 16),
                              stop=tuple(body.get("stop") or ()), stop_token_ids=tuple(body.get("stop_token_ids") or ()),
                              seed=body.get("seed"))

    def token_strings(body: dict, ids: list[int]) -> list[str]:
        if body.get("return_tokens_as_token_ids"):
            return [f"token_id:{t}" for t in ids]
        return [tokenizer.decode([t]) for t in ids]

    @app.post("/v1/completions")
    def completions(body: dict):
        check_model(body)
        prompt = body["prompt"]
        ids = prompt[0] if isinstance(prompt[0], list) else prompt
        out = engine.generate([GenerationRequest("r", ids, params_of(body, body.get("n", 1)))])
        choices = []
        for c in out:
            choice = {"index": c.sample_index, "text": c.text, "finish_reason": c.finish_reason,
                      "logprobs": {"tokens": token_strings(body, c.token_ids), "token_logprobs": c.logprobs,
                                   "top_logprobs": None, "text_offset": []}}
            if body.get("model") != "no-ids":
                choice["token_ids"] = c.token_ids
            choices.append(choice)
        return {"id": "cmpl-1", "object": "text_completion", "model": body["model"], "choices": choices}

    @app.post("/v1/chat/completions")
    def chat(body: dict):
        check_model(body)
        ids = tokenizer.apply_chat_template(body["messages"], add_generation_prompt=True, tokenize=True)
        ids = list(ids["input_ids"] if hasattr(ids, "keys") else ids)
        c = engine.generate([GenerationRequest("c", ids, params_of(body, 1))])[0]
        content = [{"token": s, "logprob": lp} for s, lp in zip(token_strings(body, c.token_ids), c.logprobs)]
        return {"id": "chat-1", "object": "chat.completion", "model": body["model"], "prompt_token_ids": ids,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": c.text},
                             "finish_reason": c.finish_reason, "token_ids": c.token_ids,
                             "logprobs": {"content": content}}]}

    return app


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server(tokenizer):
    engine = BuiltinEngine(load_model("tiny-llama", seed=0), tokenizer, num_blocks=256)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(make_app(engine, tokenizer), log_level="warning", timeout_graceful_shutdown=1)
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not srv.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the test server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(timeout=10)
    sock.close()


@pytest.fixture(scope="module")
def direct(tokenizer):
    return BuiltinEngine(load_model("tiny-llama", seed=0), tokenizer, num_blocks=256)


def prompt(tokenizer, text):
    ids = tokenizer.apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True, tokenize=True)
    return list(ids["input_ids"] if hasattr(ids, "keys") else ids)


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
    want = direct.generate([GenerationRequest("c", prompt(tokenizer, "Add 2 and 3."),
                                              SamplingParams(temperature=0.0, max_tokens=6))])[0]
    assert reply.text == want.text and reply.token_ids == want.token_ids
    assert reply.logprobs == pytest.approx(want.logprobs, abs=1e-6)
    assert reply.prompt_token_ids == want.prompt_token_ids and reply.finish_reason == want.finish_reason
    with pytest.raises(ValueError, match="one completion"):
        OpenAIEngine(server, MODEL).chat(messages, SamplingParams(n=2))


def test_errors_name_the_url_and_5xx_is_retried(server, tokenizer):
    request = [GenerationRequest("a", prompt(tokenizer, "Hi"), SamplingParams(temperature=0.0, max_tokens=2))]
    dead = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(OpenAIServerError, match=f"cannot reach .*{dead}/v1/completions"):
        OpenAIEngine(dead, MODEL).generate(request)
    with pytest.raises(OpenAIServerError, match=r"/v1/completions answered HTTP 404: The model `nope` does not exist"):
        OpenAIEngine(server, "nope").generate(request)
    with pytest.raises(OpenAIServerError, match=r"did not answer within timeout_s=0.3"):
        OpenAIEngine(server, "slow", timeout_s=0.3).generate(request)
    flaky = OpenAIEngine(server, "flaky", backoff_s=0.01).generate(request)  # 503 once, then served
    assert len(flaky) == 1 and flaky[0].token_ids


def test_update_weights_is_refused(server):
    with pytest.raises(NotImplementedError, match="the openai backend serves a remote model; weights cannot be updated"):
        OpenAIEngine(server, MODEL).update_weights([("w", torch.zeros(1))], version=1)
