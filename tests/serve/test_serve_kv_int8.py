"""`posttrain serve --kv-cache-dtype int8`: the server's engine keeps its KV cache in int8 and
answers over HTTP as the fp32 one does."""

import json
import urllib.request

from posttrain.serve.server import ServerSettings
from tests.serve.conftest import start_server


def complete(base_url: str, prompt: str) -> dict:
    body = json.dumps({"model": "tiny-llama", "prompt": prompt, "max_tokens": 8, "temperature": 0}).encode()
    request = urllib.request.Request(f"{base_url}/completions", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read())


def test_an_int8_kv_cache_server_answers_like_the_fp32_one():
    replies = {}
    for dtype in ("fp32", "int8"):
        running, stop = start_server(
            ServerSettings("tiny-llama", max_concurrency=2, max_model_len=256, kv_cache_dtype=dtype)
        )
        try:
            assert running.engine.runner.quantized == (dtype == "int8")
            replies[dtype] = complete(running.base_url, "The river stone window garden")["choices"][0]["text"]
        finally:
            stop()
    assert replies["int8"] and replies["int8"] == replies["fp32"]  # the tiny model's greedy tokens agree
