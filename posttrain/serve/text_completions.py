"""POST /v1/completions: prompts as text or token ids (vLLM's return_token_ids too), each
continued n times; whole, or one prompt streamed as server-sent events."""

from __future__ import annotations

import time

from fastapi import Request

from posttrain.engine.interface import Completion
from posttrain.serve.api_errors import ApiError
from posttrain.serve.app_state import AppState
from posttrain.serve.engine_requests import check_model, collect, next_update, prompt_ids, sampling_params, submit
from posttrain.serve.engine_worker import ActiveRequest
from posttrain.serve.openai_responses import completion_logprobs, event_stream, finish_reason, usage
from posttrain.serve.protocol import CompletionRequest
from posttrain.serve.text_stream import TextStream


async def text_completion(state: AppState, body: CompletionRequest, request: Request):
    served, worker = state.served, state.worker
    check_model(served, body.model)
    if body.stream and len(body.prompts) > 1:
        raise ApiError(400, "stream takes one prompt", param="prompt")
    prompts = [prompt_ids(served, p) for p in body.prompts]
    top = body.logprobs or 0
    actives = [
        submit(
            worker,
            worker.new_request_id("cmpl"),
            ids,
            sampling_params(served, body, ids, body.max_tokens or 16, body.stop_strings, top),
        )
        for ids in prompts
    ]
    if body.stream:
        return event_stream(state, _completion_chunks(state, body, actives[0], request), actives[0], request.url.path)
    choices, usage_prompt, results = [], [], []
    for number, (ids, active) in enumerate(zip(prompts, actives)):
        for completion in await collect(worker, active, request):
            choice = {
                "index": number * body.n + completion.sample_index,
                "text": completion.text,
                "logprobs": completion_logprobs(served.tokenizer, completion) if body.logprobs is not None else None,
                "finish_reason": finish_reason(completion),
            }
            if body.return_token_ids:
                choice["token_ids"] = completion.token_ids
                choice["prompt_token_ids"] = ids
            choices.append(choice)
            results.append(completion)
        usage_prompt.extend(ids)
    state.metrics.request_done(request.url.path, 200)
    return {
        "id": actives[0].request_id,
        "object": "text_completion",
        "created": int(time.time()),
        "model": served.name,
        "choices": choices,
        "usage": usage(usage_prompt, results),
    }


async def _completion_chunks(state: AppState, body: CompletionRequest, active: ActiveRequest, request: Request):
    base = {"id": active.request_id, "object": "text_completion", "model": state.served.name}
    streams = [TextStream(state.served.tokenizer, body.stop_strings) for _ in range(body.n)]
    finished: list[Completion] = []
    while len(finished) < body.n:
        update = await next_update(state.worker, active, request)
        stream = streams[update.sample_index]
        piece = stream.push(update.token_ids) if update.token_ids else ""
        finish = None
        if update.completion is not None:
            finished.append(update.completion)
            piece += stream.finish(update.completion.text)
            finish = finish_reason(update.completion)
        if piece or finish:
            choice = {"index": update.sample_index, "text": piece, "logprobs": None, "finish_reason": finish}
            yield {**base, "created": int(time.time()), "choices": [choice]}
    if body.include_usage:
        yield {
            **base,
            "created": int(time.time()),
            "choices": [],
            "usage": usage(active.request.prompt_token_ids, finished),
        }
