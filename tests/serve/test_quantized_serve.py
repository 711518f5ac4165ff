"""The fast variant with int8 weights behind a real server, through the official client: it
answers, plausibly (lossy: the same answer as float32 is not promised)."""

import pytest

from tests.serve.conftest import ask_capital, start_server


@pytest.fixture(scope="module")
def int8_server():
    from posttrain.serve.server import ServerSettings

    running, stop = start_server(ServerSettings("smollm2-135m", variant="fast", quantize="int8", max_model_len=512))
    yield running
    stop()


@pytest.mark.slow
def test_int8_fast_variant_answers_a_question(int8_server):
    reply = ask_capital(int8_server.base_url)
    assert "Paris" in reply.choices[0].message.content
    assert reply.usage.completion_tokens > 0
