"""The pieces of OpenAI's response bodies that chat and text completions share: finish reasons,
usage, logprobs in both endpoints' shapes, and the server-sent event stream."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from fastapi.responses import StreamingResponse

from posttrain.engine.interface import Completion
from posttrain.serve.api_errors import ApiError
from posttrain.serve.app_state import AppState
from posttrain.serve.engine_worker import ActiveRequest


def finish_reason(completion: Completion) -> str:
    return "length" if completion.finish_reason == "abort" else completion.finish_reason


def usage(prompt_ids: list[int], completions: list[Completion]) -> dict:
    output = sum(len(c.token_ids) for c in completions)
    cached = max((c.cached_prompt_tokens or 0 for c in completions), default=0)
    return {
        "prompt_tokens": len(prompt_ids),
        "completion_tokens": output,
        "total_tokens": len(prompt_ids) + output,
        "prompt_tokens_details": {"cached_tokens": cached},
    }


def chat_logprobs(tokenizer, token_ids, logprobs, tops) -> list[dict]:
    """Chat's logprobs.content: per token its text, logprob, bytes and top alternatives."""
    entries = []
    for position, (token, logprob) in enumerate(zip(token_ids, logprobs)):
        text = tokenizer.decode([token])
        alternatives = [
            {"token": tokenizer.decode([t]), "logprob": lp, "bytes": list(tokenizer.decode([t]).encode())}
            for t, lp in (tops[position] if position < len(tops) else [])
        ]
        entries.append({"token": text, "logprob": logprob, "bytes": list(text.encode()), "top_logprobs": alternatives})
    return entries


def completion_logprobs(tokenizer, completion: Completion) -> dict:
    """Text completions' logprobs: tokens, token_logprobs, top_logprobs, text_offset."""
    tokens = [tokenizer.decode([t]) for t in completion.token_ids]
    offsets, position = [], 0
    for token in tokens:
        offsets.append(position)
        position += len(token)
    tops = None
    if completion.top_logprobs:
        tops = [{tokenizer.decode([t]): lp for t, lp in row} for row in completion.top_logprobs]
    return {"tokens": tokens, "token_logprobs": completion.logprobs, "top_logprobs": tops, "text_offset": offsets}


def event_stream(state: AppState, chunks: AsyncIterator[dict], active: ActiveRequest, path: str) -> StreamingResponse:
    """The chunks as server-sent events, an error as one last event, then [DONE]; the request
    is aborted however the stream ends (a no-op once finished; frees the engine when the
    client left)."""

    async def events():
        try:
            async for chunk in chunks:
                yield f"data: {json.dumps(chunk)}\n\n"
            state.metrics.request_done(path, 200)
        except ApiError as exc:
            state.metrics.request_done(path, exc.status)
            yield f"data: {json.dumps(exc.body())}\n\n"
        finally:
            state.worker.abort(active.request_id)
        yield "data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})
