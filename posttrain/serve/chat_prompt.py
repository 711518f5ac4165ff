"""Chat messages in, prompt tokens out; the model's Hermes-style tool calls back to OpenAI's shape.

Tools are described to the model in the system message, Hermes style (the format posttrain's
agents are trained on):

    <tools>[{"type": "function", "function": {...}}, ...]</tools>
    <tool_call>{"name": "...", "arguments": {...}}</tool_call>

Earlier assistant tool calls are rendered back as <tool_call> tags and tool results as
<tool_response> in a `tool` turn. A forced call (`tool_choice` naming a function, or
"required") is started in the assistant's turn itself, `<tool_call>{"name": "f", "arguments": `,
so even a small model completes a call in the right format; that started text belongs to the
reply and is parsed with it. With tool_choice auto, calls are read strictly, as written (not
with the agent's tolerant parser, which repairs what it can): a reply whose call does not parse
comes back as content, never as a call the model did not make.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass

from posttrain.agent.tool_calls import ToolCall, parse_tool_calls
from posttrain.models.token_ids import token_ids
from posttrain.serve.protocol import ChatCompletionRequest, Message

TOOL_CALL_START, TOOL_CALL_END = "<tool_call>", "</tool_call>"


@dataclass
class ChatPrompt:
    token_ids: list[int]
    reply_prefix: str  # text already placed in the assistant's turn (a forced tool call's start)
    messages: list[dict]  # what the chat template rendered (serve --record keeps them)


def build_chat_prompt(tokenizer, request: ChatCompletionRequest, default_system: str | None = None) -> ChatPrompt:
    """`default_system`: the system message of a request that brings none and no tools (a
    trained agent's prompt, serve/default_system_prompt.py)."""
    messages = [_render(m) for m in request.messages]
    if default_system and not request.tools and not any(m["role"] == "system" for m in messages):
        messages.insert(0, {"role": "system", "content": default_system})
    if request.tools_active:
        system = _tools_system_text(request)
        if messages and messages[0]["role"] == "system":
            messages[0] = {"role": "system", "content": messages[0]["content"] + "\n\n" + system}
        else:
            messages.insert(0, {"role": "system", "content": system})
    text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    prefix = ""
    if request.forced_function:
        prefix = '<tool_call>{"name": ' + json.dumps(request.forced_function) + ', "arguments": '
    elif request.tool_choice == "required":
        prefix = '<tool_call>{"name": "'
    return ChatPrompt(token_ids(tokenizer(text + prefix, add_special_tokens=False)), prefix, messages)


def _render(message: Message) -> dict[str, str]:
    role = "system" if message.role == "developer" else message.role
    content = message.text
    if message.role == "assistant" and message.tool_calls:
        calls = [
            "<tool_call>"
            + json.dumps({"name": call.function.name, "arguments": _arguments(call.function.arguments)})
            + TOOL_CALL_END
            for call in message.tool_calls
        ]
        content = "\n".join(([content] if content else []) + calls)
    elif message.role == "tool":
        content = f"<tool_response>\n{content}\n</tool_response>"
    return {"role": role, "content": content}


def _arguments(raw: str):
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def _tools_system_text(request: ChatCompletionRequest) -> str:
    tools = json.dumps([tool.model_dump(exclude_none=True) for tool in request.tools or []])
    lines = [
        "You may call one or more functions to assist with the user query. The functions are:",
        f"<tools>{tools}</tools>",
        "To call a function, reply with a JSON object with its name and arguments within "
        '<tool_call></tool_call> tags: <tool_call>{"name": "<function-name>", "arguments": {...}}</tool_call>',
    ]
    if request.forced_function:
        lines.append(f"You must call the function {request.forced_function}.")
    elif request.tool_choice == "required":
        lines.append("You must call at least one function.")
    return "\n".join(lines)


@dataclass
class ParsedReply:
    content: str | None
    tool_calls: list[dict]


# a call as the model is taught to write it; the last one may lack its closing tag (a stop string)
_TAGGED_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)


def parse_reply(text: str, request: ChatCompletionRequest) -> ParsedReply:
    """Split a reply into its content and its tool calls (OpenAI shape). With tool_choice auto,
    strictly: a call is taken only as written, so a reply with a call that does not parse, or
    that names a function not among the request's tools, is all text. A forced call (required,
    or a named function) was opened by the server itself and the client demands one: the
    agent's tolerant parser completes it when the model cut it short."""
    if not request.tools_active:
        return ParsedReply(text, [])
    names = {tool.function.name for tool in request.tools or []}
    forced = request.forced_function is not None or request.tool_choice == "required"
    calls = _completed_calls(text, names) if forced else _tagged_calls(text, names)
    if not calls:
        return ParsedReply(text, [])
    content = text.split(TOOL_CALL_START)[0].strip()
    return ParsedReply(
        content or None,
        [
            {
                "id": f"call_{uuid.uuid4().hex[:24]}",
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            }
            for name, arguments in calls
        ],
    )


def _completed_calls(text: str, names: set[str]) -> list[tuple[str, str]]:
    calls = [c for c in parse_tool_calls(text) if isinstance(c, ToolCall) and c.name in names]
    return [(c.name, c.arguments if isinstance(c.arguments, str) else json.dumps(c.arguments)) for c in calls]


def _tagged_calls(text: str, names: set[str]) -> list[tuple[str, str]]:
    """(name, arguments as JSON) of each <tool_call> in `text`: a JSON object with the name of
    one of `names` and an "arguments" object (or a JSON string of one); [] when there is none or
    any of them is not exactly that. Nothing is completed or guessed."""
    calls = []
    for body in _TAGGED_CALL.findall(text):
        try:
            value = json.loads(body)
            arguments = value.get("arguments") if isinstance(value, dict) else None
            if isinstance(arguments, str):
                arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return []
        if not isinstance(arguments, dict) or not isinstance(value.get("name"), str) or value["name"] not in names:
            return []
        calls.append((value["name"], json.dumps(arguments)))
    return calls
