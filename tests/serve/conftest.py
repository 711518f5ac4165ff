import socket
import threading
import time
from dataclasses import dataclass

import pytest


@dataclass
class RunningServer:
    base_url: str
    app: object
    worker: object
    engine: object


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(settings) -> tuple[RunningServer, callable]:
    """A real uvicorn server on a free port, in a thread of this process (so a test can look
    at the engine behind it); returns it and its stop function."""
    import uvicorn

    from posttrain.serve.server import build_server

    app, worker, _ = build_server(settings)
    worker.start()
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.05)

    def stop() -> None:
        server.should_exit = True
        thread.join(timeout=10)
        worker.stop()

    return RunningServer(f"http://127.0.0.1:{port}/v1", app, worker, worker.engine), stop


@pytest.fixture(scope="module")
def fast_server():
    """SmolLM2-135M in the fast variant with its step compiled (--compile), a short context and
    a small queue (so that the limits are cheap to reach)."""
    from posttrain.serve.server import ServerSettings

    running, stop = start_server(
        ServerSettings(
            "smollm2-135m", variant="fast", max_concurrency=2, max_queue=1, max_model_len=512, compile_step=True
        )
    )
    yield running
    stop()


def ask_capital(base_url: str, **extra):
    """A greedy chat question through the official client: the reply."""
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="none", max_retries=0, timeout=300)
    return client.chat.completions.create(
        model="smollm2-135m",
        messages=[{"role": "user", "content": "What is the capital of France?"}],
        temperature=0,
        max_tokens=16,
        **extra,
    )
