"""An API request to the engine worker and back: the checks that answer 4xx (unknown model,
token ids out of the vocabulary, an empty or too long prompt, a full queue), the sampling
parameters, and waiting for the worker's updates (the client gone: abort; the deadline passed:
408; the engine failed: 500)."""

from __future__ import annotations

import asyncio

from fastapi import Request

from posttrain.engine.interface import Completion, GenerationRequest, SamplingParams
from posttrain.serve.api_errors import ApiError
from posttrain.serve.app_state import ServedModel
from posttrain.serve.engine_worker import ActiveRequest, EngineWorker, QueueFull, SampleUpdate
from posttrain.serve.protocol import check_max_tokens

DISCONNECT_POLL_S = 0.5


def check_model(served: ServedModel, name: str) -> None:
    if name != served.name:
        raise ApiError(
            404,
            f"The model `{name}` does not exist; this server serves `{served.name}`.",
            param="model",
            code="model_not_found",
        )


def prompt_ids(served: ServedModel, prompt: str | list[int]) -> list[int]:
    """/v1/completions' prompt, text or token ids, as token ids."""
    if isinstance(prompt, str):
        return list(served.tokenizer(prompt, add_special_tokens=False)["input_ids"])
    vocab = served.vocab_size
    if any(not 0 <= t < vocab for t in prompt):
        raise ApiError(400, f"prompt: token ids must be in [0, {vocab})", param="prompt")
    return list(prompt)


def sampling_params(served: ServedModel, body, prompt: list[int], max_tokens: int | None, stops, top: int):
    """The body's sampling, its reply capped by the room the prompt leaves in the context."""
    check_max_tokens(body, served.max_model_len)
    room = served.max_model_len - len(prompt)
    if not prompt:
        raise ApiError(400, "the prompt is empty", param="messages")
    if room < 1:
        raise ApiError(
            400,
            f"This model's maximum context length is {served.max_model_len} tokens; the prompt has "
            f"{len(prompt)} tokens.",
            param="messages",
            code="context_length_exceeded",
        )
    return SamplingParams(
        n=body.n,
        temperature=body.temperature,
        top_p=body.top_p,
        top_k=body.top_k,
        max_tokens=min(max_tokens or room, room),
        stop=tuple(stops),
        seed=body.seed,
        top_logprobs=top,
    )


def submit(worker: EngineWorker, request_id: str, prompt: list[int], params: SamplingParams) -> ActiveRequest:
    try:
        return worker.submit(GenerationRequest(request_id, prompt, params))
    except QueueFull as exc:
        raise ApiError(
            429, str(exc), "rate_limit_error", code="queue_full", headers={"Retry-After": str(exc.retry_after_s)}
        ) from None


async def next_update(worker: EngineWorker, active: ActiveRequest, request: Request) -> SampleUpdate:
    """The request's next update; aborts it when its client has gone."""
    while True:
        try:
            item = await asyncio.wait_for(active.updates.get(), DISCONNECT_POLL_S)
        except TimeoutError:
            if await request.is_disconnected():
                worker.abort(active.request_id)
                raise asyncio.CancelledError from None
            continue
        if isinstance(item, BaseException):
            raise ApiError(500, f"the engine failed: {item!r}", "server_error")
        if item.timed_out:
            worker.abort(active.request_id)
            raise ApiError(408, f"the request passed its deadline of {worker.request_timeout_s:g} s", "timeout_error")
        return item


async def collect(worker: EngineWorker, active: ActiveRequest, request: Request) -> list[Completion]:
    """Every sample of the request, finished, in sample order."""
    done: dict[int, Completion] = {}
    try:
        while len(done) < active.request.params.n:
            update = await next_update(worker, active, request)
            if update.completion is not None:
                done[update.sample_index] = update.completion
    except BaseException:
        worker.abort(active.request_id)
        raise
    return [done[i] for i in sorted(done)]
