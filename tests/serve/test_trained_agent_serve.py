"""`posttrain serve` of a trained agent's checkpoint: a chat with no system message and no tools
gets the system prompt the agent was trained with (agent_settings.json), as its prompt tokens
show; one with its own system message or tools is left as sent; --system-prompt overrides it
and --system-prompt '' turns it off."""

import httpx
import pytest

from posttrain.models.loading import load_tokenizer
from posttrain.serve.chat_prompt import build_chat_prompt
from posttrain.serve.default_system_prompt import default_system_prompt
from posttrain.serve.protocol import ChatCompletionRequest
from tests.serve.conftest import start_server
from tests.trained_agent_checkpoint import SAVED_PROMPT_MARK, trained_settings, write_trained_agent_checkpoint

QUESTION = {"role": "user", "content": "List the files in /app."}
OWN_SYSTEM = {"role": "system", "content": "You are a poet."}
TOOL = {"type": "function", "function": {"name": "ls", "parameters": {"type": "object"}}}
SMOLLM_DEFAULT = "named SmolLM"  # the chat template's own system message, for a chat without one


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return write_trained_agent_checkpoint(tmp_path_factory.mktemp("trained"))


def test_the_saved_prompt_is_the_default_and_the_flag_overrides_it(checkpoint):
    saved = trained_settings().system_prompt
    prompt, line = default_system_prompt(str(checkpoint), None)
    assert prompt == saved
    assert line == (
        f"chats without a system message or tools get the trained agent's system prompt from "
        f"{checkpoint / 'agent_settings.json'} (--system-prompt '' turns it off)"
    )
    assert default_system_prompt(f"builtin:{checkpoint}", None)[0] == saved
    assert default_system_prompt(str(checkpoint), "Be terse.")[0] == "Be terse."
    prompt, line = default_system_prompt(str(checkpoint), "")
    assert prompt is None and "is not used (--system-prompt '')" in line
    assert default_system_prompt("smollm2-135m", None) == (None, None)  # a model that saved nothing


def test_the_default_goes_only_into_chats_without_a_system_message_or_tools():
    tokenizer = load_tokenizer("smollm2-135m")

    def text(messages, **extra) -> str:
        request = ChatCompletionRequest(model="m", messages=messages, **extra)
        return tokenizer.decode(build_chat_prompt(tokenizer, request, "AGENT PROMPT").token_ids)

    plain = text([QUESTION])
    assert plain.startswith("<|im_start|>system\nAGENT PROMPT<|im_end|>") and SMOLLM_DEFAULT not in plain
    own = text([OWN_SYSTEM, QUESTION])
    assert "AGENT PROMPT" not in own and "You are a poet." in own
    assert "AGENT PROMPT" not in text([QUESTION], tools=[TOOL])


def test_serving_a_trained_checkpoint_gives_plain_chats_its_system_prompt(checkpoint):
    from posttrain.serve.server import ServerSettings

    running, stop = start_server(ServerSettings(str(checkpoint), max_concurrency=2, max_model_len=1024))
    try:
        tokenizer = running.engine.tokenizer

        def prompt_of(messages, **extra) -> str:
            body = {"model": str(checkpoint), "messages": messages, "max_tokens": 4, "temperature": 0}
            response = httpx.post(
                f"{running.base_url}/chat/completions", json={**body, "return_token_ids": True, **extra}, timeout=300
            )
            assert response.status_code == 200, response.text
            return tokenizer.decode(response.json()["choices"][0]["prompt_token_ids"])

        plain = prompt_of([QUESTION])
        assert plain.startswith(f"<|im_start|>system\n{trained_settings().system_prompt}<|im_end|>")
        assert SAVED_PROMPT_MARK in plain and SMOLLM_DEFAULT not in plain
        own = prompt_of([OWN_SYSTEM, QUESTION])
        assert SAVED_PROMPT_MARK not in own and "You are a poet." in own
        assert SAVED_PROMPT_MARK not in prompt_of([QUESTION], tools=[TOOL])
    finally:
        stop()


def test_a_malformed_settings_file_stops_serve_in_one_line_before_loading(tmp_path):
    from tests.cli.test_cli_errors import one_error_line, run_cli

    (tmp_path / "agent_settings.json").write_text('{"tools": ["bash", "finish"], "max_steps": 0}')
    line = one_error_line(run_cli("serve", str(tmp_path)))
    assert f"{tmp_path / 'agent_settings.json'}: max_steps: Input should be greater than or equal to 1" in line
