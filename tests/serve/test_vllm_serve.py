"""`posttrain serve --engine vllm` where vLLM is installed (.venv-vllm): the same API through
the official client, standard and fast (vLLM's n-gram speculation) with the same greedy reply."""

import pytest

from tests.serve.conftest import ask_capital, start_server

pytest.importorskip("vllm")


@pytest.mark.slow
def test_vllm_engine_behind_the_server_answers_greedy_alike_in_both_variants():
    from posttrain.serve.server import ServerSettings

    replies = []
    for variant in ("standard", "fast"):
        running, stop = start_server(ServerSettings("smollm2-135m", variant=variant, engine="vllm", max_model_len=512))
        try:
            reply = ask_capital(running.base_url, logprobs=True)
            replies.append(reply.choices[0].message.content)
            assert reply.choices[0].logprobs.content and reply.usage.completion_tokens > 0
        finally:
            stop()
    assert replies[0] == replies[1]
