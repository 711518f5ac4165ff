"""POST /v1/chat/completions: messages through the chat template (tools and tool_choice
included), the reply parsed for Hermes tool calls; whole, or streamed as server-sent events."""

from __future__ import annotations

import time

from fastapi import Request

from posttrain.engine.interface import Completion
from posttrain.serve.api_errors import ApiError
from posttrain.serve.app_state import AppState, ServedModel
from posttrain.serve.chat_prompt import (
    TOOL_CALL_END,
    TOOL_CALL_START,
    ChatPrompt,
    build_chat_prompt,
    parse_reply,
)
from posttrain.serve.engine_requests import check_model, collect, next_update, sampling_params, submit
from posttrain.serve.engine_worker import ActiveRequest
from posttrain.serve.openai_responses import chat_logprobs, event_stream, finish_reason, usage
from posttrain.serve.protocol import ChatCompletionRequest
from posttrain.serve.text_stream import TextStream
from posttrain.serve.trace_recorder import trace_row


async def chat_completion(state: AppState, body: ChatCompletionRequest, request: Request):
    served = state.served
    check_model(served, body.model)
    try:
        prompt = build_chat_prompt(served.tokenizer, body, served.system_prompt)
    except Exception as exc:  # a template that refuses these messages (e.g. bad role order)
        raise ApiError(400, f"messages: cannot apply the chat template: {exc}", param="messages") from None
    max_tokens = body.max_completion_tokens or body.max_tokens
    stops = body.stop_strings + ((TOOL_CALL_END,) if body.forced_function else ())
    top = (body.top_logprobs or 0) if body.logprobs else 0
    params = sampling_params(served, body, prompt.token_ids, max_tokens, stops, top)
    active = submit(state.worker, state.worker.new_request_id("chatcmpl"), prompt.token_ids, params)
    if body.stream:
        chunks = _chat_chunks(state, body, active, prompt, request)
        return event_stream(state, chunks, active, request.url.path)
    completions = await collect(state.worker, active, request)
    choices = []
    for completion in completions:
        text = _reply_text(body, prompt.reply_prefix, completion)
        reply = parse_reply(text, body)
        message = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = reply.tool_calls
        choice = {
            "index": completion.sample_index,
            "message": message,
            "logprobs": {"content": _logprobs(served, completion)} if body.logprobs else None,
            "finish_reason": "tool_calls" if reply.tool_calls else finish_reason(completion),
        }
        if body.return_token_ids:
            choice["token_ids"] = completion.token_ids
            choice["prompt_token_ids"] = prompt.token_ids
        choices.append(choice)
        _record(state, prompt, completion, text, message, choice["finish_reason"], active.request_id)
    state.metrics.request_done(request.url.path, 200)
    return {
        "id": active.request_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": served.name,
        "choices": choices,
        "usage": usage(prompt.token_ids, completions),
        "system_fingerprint": f"posttrain-{served.variant}",
    }


def _record(
    state: AppState, prompt: ChatPrompt, completion: Completion, text: str, message: dict, finish: str, request_id: str
) -> None:
    """serve --record: the finished choice as a chat-data row; `text` is the whole reply."""
    recorder = state.recorder
    if recorder is None:
        return
    recorder.record(
        trace_row(
            prompt.messages,
            text,
            message,
            prompt.token_ids,
            completion.token_ids,
            completion.logprobs,
            finish,
            recorder.model,
            recorder.tokenizer,
            request_id,
        )
    )


def _reply_text(body: ChatCompletionRequest, prefix: str, completion: Completion) -> str:
    """The whole reply: the prompt's reply prefix, the text, and the closing tag of a forced
    tool call that stopped at it (the tag is a stop string, so the engine left it out)."""
    text = prefix + completion.text
    if body.forced_function and completion.finish_reason == "stop" and not text.endswith(TOOL_CALL_END):
        text += TOOL_CALL_END
    return text


def _logprobs(served: ServedModel, completion: Completion) -> list[dict]:
    return chat_logprobs(served.tokenizer, completion.token_ids, completion.logprobs, completion.top_logprobs or [])


def _delta(index: int, delta: dict) -> dict:
    return {"index": index, "delta": delta, "logprobs": None, "finish_reason": None}


async def _chat_chunks(
    state: AppState, body: ChatCompletionRequest, active: ActiveRequest, prompt: ChatPrompt, request: Request
):
    served, prefix = state.served, prompt.reply_prefix
    base = {"id": active.request_id, "object": "chat.completion.chunk", "model": served.name}
    n = body.n
    buffer_tools = body.tools_active
    # with tools, the text before a tool call streams as content; the call (from its tag on)
    # is parsed from the whole reply and sent in the last chunk
    held = (TOOL_CALL_START,) if buffer_tools else ()
    streams = [TextStream(served.tokenizer, body.stop_strings + held, prefix) for _ in range(n)]
    for index in range(n):
        yield {
            **base,
            "created": int(time.time()),
            "choices": [_delta(index, {"role": "assistant", "content": ""})],
        }
    finished: list[Completion] = []
    while len(finished) < n:
        update = await next_update(state.worker, active, request)
        stream = streams[update.sample_index]
        piece = stream.push(update.token_ids) if update.token_ids else ""
        logprobs = None
        if body.logprobs and update.token_ids:
            logprobs = {
                "content": chat_logprobs(served.tokenizer, update.token_ids, update.logprobs, update.top_logprobs)
            }
        if piece or logprobs:
            yield {
                **base,
                "created": int(time.time()),
                "choices": [{**_delta(update.sample_index, {"content": piece}), "logprobs": logprobs}],
            }
        if update.completion is None:
            continue
        completion = update.completion
        finished.append(completion)
        delta: dict = {}
        finish = finish_reason(completion)
        text = _reply_text(body, prefix, completion)
        reply = parse_reply(text, body)
        if buffer_tools:
            # the content not streamed yet: up to the call, or all of it when no call parsed
            rest = (text.split(TOOL_CALL_START)[0] if reply.tool_calls else text)[stream.emitted :]
            if rest:
                delta["content"] = rest
            if reply.tool_calls:
                delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(reply.tool_calls)]
                finish = "tool_calls"
        else:
            rest = stream.finish(completion.text)
            if rest:
                delta["content"] = rest
        message = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = reply.tool_calls
        _record(state, prompt, completion, text, message, finish, active.request_id)
        yield {
            **base,
            "created": int(time.time()),
            "choices": [{**_delta(update.sample_index, delta), "finish_reason": finish}],
        }
    if body.include_usage:
        yield {
            **base,
            "created": int(time.time()),
            "choices": [],
            "usage": usage(active.request.prompt_token_ids, finished),
        }
