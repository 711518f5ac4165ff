"""`posttrain serve` driven by the official openai client against a real server and the real model."""

import http.client
import json
import math
import threading
import time
from urllib.parse import urlsplit

import openai
import pytest

pytestmark = pytest.mark.slow

MODEL = "smollm2-135m"
QUESTION = [{"role": "user", "content": "What is the capital of France?"}]


def http_request(base_url: str, method: str, path: str, body: dict | None = None) -> http.client.HTTPResponse:
    """A plain HTTP request (the openai client hides status headers and cannot hang up mid-stream)."""
    parts = urlsplit(base_url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    payload = json.dumps(body) if body is not None else None
    connection.request(method, path, payload, {"Content-Type": "application/json"})
    return connection.getresponse()


@pytest.fixture(scope="module")
def client(fast_server):
    return openai.OpenAI(base_url=fast_server.base_url, api_key="none", max_retries=0, timeout=120)


def test_models_health_and_chat(client, fast_server):
    assert [m.id for m in client.models.list().data] == [MODEL]
    health = json.loads(http_request(fast_server.base_url, "GET", "/health").read())
    assert health == {"status": "ok", "model": MODEL, "variant": "fast"}
    reply = client.chat.completions.create(model=MODEL, messages=QUESTION, max_tokens=8, temperature=0)
    choice = reply.choices[0]
    assert choice.message.role == "assistant" and "Paris" in choice.message.content
    assert choice.finish_reason in ("stop", "length")
    assert reply.usage.completion_tokens <= 8 and reply.usage.prompt_tokens > 10
    compiled = fast_server.engine.runner.compiled  # --compile: every test here runs the compiled step
    assert compiled is not None and compiled.compiled_once


def test_the_decode_cache_is_reserved_for_every_admitted_request(fast_server):
    """Allocated at start (a grown cache costs a busy step up to a second): a row per admitted
    request, as long as the served context."""
    cache = fast_server.engine.runner.decode_cache
    assert cache.v.shape[1] >= 2 and cache.v.shape[3] >= 512 and cache.growths >= 1


def test_streaming_gives_the_same_text_as_one_reply(client):
    whole = client.chat.completions.create(model=MODEL, messages=QUESTION, max_tokens=12, temperature=0)
    chunks = list(
        client.chat.completions.create(
            model=MODEL,
            messages=QUESTION,
            max_tokens=12,
            temperature=0,
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == whole.choices[0].message.content
    assert len([c for c in chunks if c.choices and c.choices[0].delta.content]) >= 2  # streamed, not one piece
    assert chunks[-1].usage.completion_tokens == whole.usage.completion_tokens


def test_n_samples_seed_and_logprobs(client):
    kwargs = dict(model=MODEL, messages=QUESTION, max_tokens=6, temperature=1.0, n=3, seed=7)
    reply = client.chat.completions.create(**kwargs, logprobs=True, top_logprobs=2)
    assert sorted(c.index for c in reply.choices) == [0, 1, 2]
    again = client.chat.completions.create(**kwargs)
    assert [c.message.content for c in again.choices] == [c.message.content for c in reply.choices]
    for choice in reply.choices:
        entries = choice.logprobs.content
        assert entries and all(e.logprob <= 0 for e in entries)
        for entry in entries:
            assert len(entry.top_logprobs) == 2
            assert entry.top_logprobs[0].logprob >= entry.top_logprobs[1].logprob
            assert entry.logprob <= entry.top_logprobs[0].logprob + 1e-6
            assert math.isfinite(entry.logprob)


def test_a_forced_tool_call_comes_back_in_openai_shape(client):
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "The weather in a city",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
            },
        }
    ]
    reply = client.chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": "What is the weather in Paris?"}],
        tools=tools,
        tool_choice={"type": "function", "function": {"name": "get_weather"}},
        max_tokens=24,
        temperature=0,
    )
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls"
    call = choice.message.tool_calls[0]
    assert call.type == "function" and call.function.name == "get_weather" and call.id.startswith("call_")
    assert isinstance(json.loads(call.function.arguments), dict)
    # the call and its result go back in the next turn
    follow_up = client.chat.completions.create(
        model=MODEL,
        messages=[
            {"role": "user", "content": "What is the weather in Paris?"},
            {"role": "assistant", "content": None, "tool_calls": [call.model_dump()]},
            {"role": "tool", "tool_call_id": call.id, "content": "sunny, 21 C"},
        ],
        tools=tools,
        max_tokens=4,
        temperature=0,
    )
    assert follow_up.choices[0].message.role == "assistant"


WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


@pytest.mark.parametrize(
    "question, tool_choice",
    [
        ("Tell me about Paris, then check its weather.", "auto"),
        ("What is the weather in Paris?", {"type": "function", "function": {"name": "get_weather"}}),
    ],
)
def test_streaming_with_tools_sends_the_text_as_it_comes_and_the_call_at_the_end(client, question, tool_choice):
    kwargs = dict(
        model=MODEL,
        messages=[{"role": "user", "content": question}],
        tools=[WEATHER_TOOL],
        tool_choice=tool_choice,
        max_tokens=24,
        temperature=0,
    )
    whole = client.chat.completions.create(**kwargs).choices[0]
    chunks = [c for c in client.chat.completions.create(**kwargs, stream=True) if c.choices]
    pieces = [c.choices[0].delta.content for c in chunks if c.choices[0].delta.content]
    calls = [call for c in chunks for call in (c.choices[0].delta.tool_calls or [])]
    assert "".join(pieces).strip() == (whole.message.content or "")
    if whole.message.tool_calls:  # a call that did not parse stays text, as in the whole reply
        assert "<tool_call>" not in "".join(pieces)
    assert chunks[-1].choices[0].finish_reason == whole.finish_reason
    assert [(c.function.name, c.function.arguments) for c in calls] == [
        (c.function.name, c.function.arguments) for c in whole.message.tool_calls or []
    ]
    if whole.message.content and len(whole.message.content) > 20:
        assert len(pieces) >= 2  # streamed, not one piece at the end
    if tool_choice != "auto":
        assert calls and calls[0].function.name == "get_weather" and not pieces


def test_completions_with_token_ids_and_logprobs(client, fast_server):
    tokenizer = fast_server.engine.tokenizer
    ids = tokenizer("The capital of France is", add_special_tokens=False)["input_ids"]
    reply = client.completions.create(
        model=MODEL, prompt=ids, max_tokens=5, temperature=0, logprobs=1, extra_body={"return_token_ids": True}
    )
    choice = reply.choices[0].model_dump()
    assert choice["prompt_token_ids"] == ids and len(choice["token_ids"]) == len(choice["logprobs"]["tokens"])
    assert tokenizer.decode(choice["token_ids"]) == choice["text"]
    text = client.completions.create(model=MODEL, prompt="The capital of France is", max_tokens=5, temperature=0)
    assert text.choices[0].text == choice["text"]


def test_max_tokens_beyond_the_context_and_a_body_that_is_not_json_are_400s(client, fast_server):
    for field in ("max_tokens", "max_completion_tokens"):
        with pytest.raises(openai.BadRequestError) as caught:
            client.chat.completions.create(model=MODEL, messages=QUESTION, **{field: 513})  # the context is 512
        error = caught.value.body
        assert error["param"] == field and "513" in error["message"] and "512" in error["message"]
    with pytest.raises(openai.BadRequestError) as caught:
        client.completions.create(model=MODEL, prompt="Hi", max_tokens=10_000)
    assert caught.value.body["param"] == "max_tokens"
    parts = urlsplit(fast_server.base_url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    connection.request(
        "POST", "/v1/chat/completions", '{"model": "x", "messages": [', {"Content-Type": "application/json"}
    )
    response = connection.getresponse()
    error = json.loads(response.read())["error"]
    assert response.status == 400 and error["param"] is None
    assert error["message"].startswith("the request body is not valid JSON")


@pytest.mark.parametrize(
    "kwargs, status, param",
    [
        (dict(model="gpt-4", messages=QUESTION), 404, "model"),
        (dict(model=MODEL, messages=[{"role": "wizard", "content": "hi"}]), 400, "messages"),
        (dict(model=MODEL, messages=[{"role": "user"}]), 400, "messages"),
        (dict(model=MODEL, messages=QUESTION, temperature=-1), 400, "temperature"),
        (dict(model=MODEL, messages=QUESTION, n=0), 400, "n"),
        (dict(model=MODEL, messages=[{"role": "user", "content": "word " * 600}]), 400, "messages"),
    ],
)
def test_bad_requests_get_openai_errors(client, kwargs, status, param):
    with pytest.raises(openai.APIStatusError) as caught:
        client.chat.completions.create(max_tokens=2, **kwargs)
    assert caught.value.status_code == status
    error = caught.value.body
    assert error["message"] and error["type"] and (error["param"] or "").startswith(param)
    if "word " in str(kwargs):
        assert error["code"] == "context_length_exceeded"


def test_queue_limit_429_disconnect_aborts_and_metrics(fast_server):
    """Two requests run, one waits, the next gets 429 with Retry-After; clients that hang up
    have their requests aborted in the engine."""
    url = fast_server.base_url
    # greedy counting goes on for hundreds of tokens: the requests are still running when we look
    counting = ", ".join(str(i) for i in range(1, 21)) + ","
    body = {"model": MODEL, "prompt": counting, "max_tokens": 400, "temperature": 0, "stream": True}
    streams = []
    for _ in range(3):
        response = http_request(url, "POST", "/v1/completions", body)
        assert response.status == 200
        streams.append(response)
    deadline = time.monotonic() + 20
    while fast_server.worker.running + fast_server.worker.queue_length < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    rejected = http_request(url, "POST", "/v1/completions", {**body, "stream": False})
    assert rejected.status == 429
    assert int(rejected.getheader("Retry-After")) >= 1
    assert json.loads(rejected.read())["error"]["type"] == "rate_limit_error"
    for response in streams:
        response.close()
    deadline = time.monotonic() + 30
    while (fast_server.worker.running or fast_server.engine.has_work()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert fast_server.worker.running == 0 and not fast_server.engine.has_work()
    metrics = http_request(url, "GET", "/metrics").read().decode()
    for name in (
        "requests_total",
        "queue_length",
        "output_tokens_per_second",
        "time_to_first_token_seconds_bucket",
        "inter_token_latency_seconds_count",
        "prefix_cache_hit_rate",
        "speculative_acceptance_rate",
    ):
        assert f"posttrain_serve_{name}" in metrics, name
    assert 'posttrain_serve_requests_total{endpoint="/v1/completions",status="429"} 1' in metrics


def test_concurrent_clients_are_batched(client, fast_server):
    replies = [None] * 2

    def ask(i: int) -> None:
        replies[i] = client.chat.completions.create(model=MODEL, messages=QUESTION, max_tokens=6, temperature=0)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert replies[0].choices[0].message.content == replies[1].choices[0].message.content


def test_a_request_past_its_deadline_is_aborted_with_a_408(fast_server):
    worker = fast_server.worker
    counting = ", ".join(str(i) for i in range(1, 21)) + ","
    body = {"model": MODEL, "prompt": counting, "max_tokens": 400, "temperature": 0}
    worker.request_timeout_s = 0.5
    try:
        response = http_request(fast_server.base_url, "POST", "/v1/completions", body)
    finally:
        worker.request_timeout_s = 600.0
    assert response.status == 408
    assert json.loads(response.read())["error"]["type"] == "timeout_error"
    deadline = time.monotonic() + 10
    while fast_server.engine.has_work() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not fast_server.engine.has_work()  # aborted in the engine, not left running
