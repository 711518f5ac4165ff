"""`posttrain serve` with API keys, rate limits and a body size limit, over real HTTP against a
real server (the tiny random model): 401 without or with a wrong key, 200 with one, 429 with
Retry-After once a key's bucket is empty, 413 for an oversized body; refusals counted in
/metrics and logged once a reason; and the engine back to no sequences and no KV blocks."""

import http.client
import json
import logging
import re
import time
from urllib.parse import urlsplit

import pytest

from posttrain.serve.rate_limit import RateLimit
from posttrain.serve.server import ServerSettings
from tests.serve.conftest import start_server

MODEL = "tiny-llama"
CHAT = {"model": MODEL, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, "temperature": 0}


def call(base_url, method, path, body=None, key=None, raw: bytes | None = None, headers=None):
    """(status, headers, body as JSON or text) of one plain HTTP request."""
    parts = urlsplit(base_url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    sent = {"Content-Type": "application/json", **(headers or {})}
    if key is not None:
        sent["Authorization"] = f"Bearer {key}"
    payload = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    connection.request(method, path, payload, sent, encode_chunked=callable(getattr(raw, "__next__", None)))
    response = connection.getresponse()
    text = response.read().decode()
    connection.close()
    try:
        return response.status, response.headers, json.loads(text)
    except json.JSONDecodeError:
        return response.status, response.headers, text


def refused(base_url) -> dict[str, float]:
    text = call(base_url, "GET", "/metrics")[2]
    return {m[0]: float(m[1]) for m in re.findall(r'posttrain_serve_refused_total\{reason="(\w+)"\} (\S+)', text)}


def gauge(base_url, name) -> float:
    text = call(base_url, "GET", "/metrics")[2]
    return float(re.search(rf"^posttrain_serve_{name} (\S+)$", text, re.M).group(1))


@pytest.fixture(scope="module")
def keyed():
    running, stop = start_server(
        ServerSettings(
            MODEL, max_concurrency=2, max_model_len=256, api_keys=("key-one", "key-two"), max_body_bytes=4096
        )
    )
    yield running.base_url.removesuffix("/v1")
    stop()


@pytest.fixture(scope="module")
def limited():
    running, stop = start_server(
        ServerSettings(
            MODEL, max_concurrency=2, max_model_len=256, api_keys=("key-one", "key-two"), rate_limit=RateLimit(2, 60.0)
        )
    )
    yield running.base_url.removesuffix("/v1")
    stop()


def test_every_v1_endpoint_needs_a_key_and_a_known_one_gets_through(keyed, caplog):
    with caplog.at_level(logging.WARNING, logger="posttrain.serve.refusals"):
        for method, path, body in (
            ("GET", "/v1/models", None),
            ("POST", "/v1/chat/completions", CHAT),
            ("POST", "/v1/completions", {"model": MODEL, "prompt": "a", "max_tokens": 2}),
        ):
            status, headers, reply = call(keyed, method, path, body)
            assert status == 401 and headers["WWW-Authenticate"] == "Bearer"
            assert reply["error"]["code"] == "invalid_api_key" and reply["error"]["type"] == "invalid_request_error"
            status, _, reply = call(keyed, method, path, body, key="key-three")
            assert status == 401 and reply["error"]["message"] == "Incorrect API key provided."
        # a body that is not even JSON is refused for its missing key before it is parsed
        status, _, _ = call(keyed, "POST", "/v1/chat/completions", raw=b"{not json")
        assert status == 401
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2  # one line a reason, however many refusals
    assert "401 missing_api_key" in lines[0] and "401 wrong_api_key" in lines[1]
    assert all("key-three" not in line for line in lines)

    status, _, reply = call(keyed, "POST", "/v1/chat/completions", CHAT, key="key-one")
    assert status == 200 and reply["choices"][0]["message"]["role"] == "assistant"
    status, _, reply = call(keyed, "GET", "/v1/models", key="key-two")
    assert status == 200 and reply["data"][0]["id"] == MODEL
    # health and metrics stay open
    assert call(keyed, "GET", "/health")[0] == 200 and call(keyed, "GET", "/metrics")[0] == 200
    counts = refused(keyed)
    assert counts["missing_api_key"] == 4 and counts["wrong_api_key"] == 3 and counts["rate_limited"] == 0


def test_an_oversized_body_is_413_and_a_malformed_one_400(keyed):
    big = {**CHAT, "messages": [{"role": "user", "content": "x" * 5000}]}
    status, _, reply = call(keyed, "POST", "/v1/chat/completions", big, key="key-one")
    assert status == 413 and "4096 bytes" in reply["error"]["message"]
    # no Content-Length: the body is refused once it grows past the limit
    status, _, reply = call(keyed, "POST", "/v1/chat/completions", key="key-one", raw=iter([b"{" + b" " * 3000] * 3))
    assert status == 413
    status, _, reply = call(keyed, "POST", "/v1/chat/completions", key="key-one", raw=b'{"model": ')
    assert status == 400 and "not valid JSON" in reply["error"]["message"]
    # what the framework itself refuses comes back in OpenAI's shape too, and is counted
    not_utf8 = b'{"model": "tiny-llama", "messages": [{"role": "user", "content": "\xff\xfe"}]}'
    for raw, path, expected in (
        (not_utf8, "/v1/chat/completions", 400),
        (b"", "/v1/chat/completions", 400),
        (b"{}", "/v1/no-such-route", 404),
    ):
        status, _, reply = call(keyed, "POST", path, key="key-one", raw=raw)
        assert status == expected and reply["error"]["type"] == "invalid_request_error", reply
    counts = refused(keyed)
    assert counts["body_too_large"] == 2 and counts["invalid_request"] == 4
    # a chunked body under the limit still reaches the route whole
    status, _, reply = call(
        keyed,
        "POST",
        "/v1/chat/completions",
        key="key-one",
        raw=iter([json.dumps(CHAT).encode()[:10], json.dumps(CHAT).encode()[10:]]),
    )
    assert status == 200


def test_a_key_past_its_rate_limit_gets_429_with_retry_after(limited):
    assert [call(limited, "GET", "/v1/models", key="key-one")[0] for _ in range(2)] == [200, 200]
    status, headers, reply = call(limited, "POST", "/v1/chat/completions", CHAT, key="key-one")
    assert status == 429 and reply["error"]["code"] == "rate_limit_exceeded"
    assert reply["error"]["type"] == "rate_limit_error" and "2/min" in reply["error"]["message"]
    assert 1 <= int(headers["Retry-After"]) <= 30  # a token every 30 s
    # another key has its own bucket; a wrong key is refused for that, not counted against a bucket
    assert call(limited, "POST", "/v1/chat/completions", CHAT, key="key-two")[0] == 200
    assert call(limited, "GET", "/v1/models", key="nope")[0] == 401
    assert refused(limited)["rate_limited"] == 1


def test_after_the_requests_the_engine_holds_no_sequence_and_no_block(keyed):
    # a streamed reply whose client hangs up after the first event
    parts = urlsplit(keyed)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    body = {**CHAT, "stream": True, "max_tokens": 200}
    connection.request(
        "POST",
        "/v1/chat/completions",
        json.dumps(body),
        {"Content-Type": "application/json", "Authorization": "Bearer key-one"},
    )
    response = connection.getresponse()
    assert response.status == 200 and response.readline().startswith(b"data:")
    connection.close()
    deadline = time.monotonic() + 20
    while gauge(keyed, "engine_sequences") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert gauge(keyed, "engine_sequences") == 0 and gauge(keyed, "kv_blocks_in_use") == 0
    assert gauge(keyed, "open_requests") == 0
