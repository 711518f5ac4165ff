"""`posttrain serve --engine vllm` where vLLM is installed (.venv-vllm): the same API through
the official client, standard and fast (vLLM's n-gram speculation) with the same greedy reply."""

import openai
import pytest

from tests.serve.conftest import start_server

pytest.importorskip("vllm")


@pytest.mark.slow
def test_vllm_engine_behind_the_server_answers_greedy_alike_in_both_variants():
    from posttrain.serve.server import ServerSettings

    replies = []
    for variant in ("standard", "fast"):
        running, stop = start_server(ServerSettings("smollm2-135m", variant=variant, engine="vllm", max_model_len=512))
        try:
            client = openai.OpenAI(base_url=running.base_url, api_key="none", max_retries=0, timeout=300)
            reply = client.chat.completions.create(
                model="smollm2-135m",
                messages=[{"role": "user", "content": "What is the capital of France?"}],
                temperature=0,
                max_tokens=16,
                logprobs=True,
            )
            replies.append(reply.choices[0].message.content)
            assert reply.choices[0].logprobs.content and reply.usage.completion_tokens > 0
        finally:
            stop()
    assert replies[0] == replies[1]
