"""A small OpenAI-compatible server for tests: FastAPI, run by uvicorn in a thread, fronting
the builtin engine (on the tiny random model unless another engine is given)."""

import socket
import threading
import time
from contextlib import contextmanager

import fastapi
import uvicorn

from posttrain.engine.builtin.engine import BuiltinEngine
from posttrain.engine.interface import GenerationRequest, SamplingParams
from posttrain.models.loading import load_model
from posttrain.models.token_ids import chat_prompt_ids

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
        return SamplingParams(
            n=n,
            temperature=body.get("temperature", 1.0),
            top_p=body.get("top_p", 1.0),
            top_k=body.get("top_k", 0),
            max_tokens=body.get("max_tokens", 16),
            stop=tuple(body.get("stop") or ()),
            stop_token_ids=tuple(body.get("stop_token_ids") or ()),
            seed=body.get("seed"),
        )

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
            choice = {
                "index": c.sample_index,
                "text": c.text,
                "finish_reason": c.finish_reason,
                "logprobs": {
                    "tokens": token_strings(body, c.token_ids),
                    "token_logprobs": c.logprobs,
                    "top_logprobs": None,
                    "text_offset": [],
                },
            }
            if body.get("model") != "no-ids":
                choice["token_ids"] = c.token_ids
            choices.append(choice)
        return {"id": "cmpl-1", "object": "text_completion", "model": body["model"], "choices": choices}

    @app.post("/v1/chat/completions")
    def chat(body: dict):
        check_model(body)
        ids = chat_prompt_ids(tokenizer, body["messages"])
        c = engine.generate([GenerationRequest("c", ids, params_of(body, 1))])[0]
        content = [{"token": s, "logprob": lp} for s, lp in zip(token_strings(body, c.token_ids), c.logprobs)]
        return {
            "id": "chat-1",
            "object": "chat.completion",
            "model": body["model"],
            "prompt_token_ids": ids,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": c.text},
                    "finish_reason": c.finish_reason,
                    "token_ids": c.token_ids,
                    "logprobs": {"content": content},
                }
            ],
        }

    return app


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def running_server(tokenizer, engine: BuiltinEngine | None = None):
    """Yields the server's base URL; stops it on exit."""
    engine = engine or BuiltinEngine(load_model("tiny-llama", seed=0), tokenizer, num_blocks=256)
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
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        srv.should_exit = True
        thread.join(timeout=10)
        sock.close()
