"""The server reads a reply's tool calls strictly: a call that does not parse is content, never a
call the model did not make (the agent's tolerant parser is for training episodes only)."""

import json

import pytest

from posttrain.agent.tool_calls import ToolCall, parse_tool_calls
from posttrain.serve.chat_prompt import parse_reply
from posttrain.serve.protocol import ChatCompletionRequest

WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}


def request(tool_choice="auto") -> ChatCompletionRequest:
    return ChatCompletionRequest(
        model="m", messages=[{"role": "user", "content": "hi"}], tools=[WEATHER], tool_choice=tool_choice
    )


def test_a_call_as_taught_comes_back_as_a_tool_call():
    reply = parse_reply(
        'Let me look. <tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>', request()
    )
    assert reply.content == "Let me look."
    (call,) = reply.tool_calls
    assert call["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    # arguments given as a JSON string of an object, and a last call cut at its closing tag (a stop string)
    reply = parse_reply('<tool_call>{"name": "get_weather", "arguments": "{\\"city\\": \\"Oslo\\"}"}', request())
    assert json.loads(reply.tool_calls[0]["function"]["arguments"]) == {"city": "Oslo"}
    assert reply.content is None


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Par</tool_call>',  # cut off mid-argument
        '<tool_call>{"name": "get_weather", "arguments": {',  # cut off by max_tokens
        '<tool_call>{"name": "get_weather"}</tool_call>',  # no arguments
        "<tool_call>{'name': 'get_weather', 'arguments': {}}</tool_call>",  # a Python literal, not JSON
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Rome",}}</tool_call>',  # trailing comma
        '<tool_call>{"name": "get_weather", "arguments": "Rome"}</tool_call>',  # arguments not an object
        '<tool_call>{"name": "send_mail", "arguments": {}}</tool_call>',  # not one of the request's tools
        '<tool_call>{"name": ["get_weather"], "arguments": {}}</tool_call>',
        '```json\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n```',  # no tag
        '{"name": "get_weather", "arguments": {"city": "Rome"}}',
        '<tool_call>{"name": "get_weather", "arguments": {}}</tool_call>\n<tool_call>{"name": "get_w</tool_call>',
    ],
)
def test_a_call_that_does_not_parse_is_content(text):
    reply = parse_reply(text, request())
    assert reply.tool_calls == [] and reply.content == text


def test_a_forced_call_the_server_opened_is_completed_when_cut_short():
    # the client demanded a call and the prompt started it: the server closes what the model left open
    reply = parse_reply('<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"', request("required"))
    assert reply.tool_calls[0]["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}


def test_the_agents_parser_stays_tolerant():
    # the same text the server returns as content is a call to the agent, which repairs it
    (call,) = parse_tool_calls('<tool_call>{"name": "bash", "arguments": {"command": "ls')
    assert isinstance(call, ToolCall) and call.arguments == {"command": "ls"}


def test_without_tools_or_with_tool_choice_none_a_reply_is_text():
    text = '<tool_call>{"name": "get_weather", "arguments": {}}</tool_call>'
    assert parse_reply(text, request("none")).tool_calls == []
    plain = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "hi"}])
    assert parse_reply(text, plain).content == text
