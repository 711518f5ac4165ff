"""The FastAPI application: OpenAI's chat and completions endpoints over one EngineWorker.

    POST /v1/chat/completions   messages (tools and tool_choice), n, stream (server-sent events),
                                temperature, top_p, max_tokens, stop, seed, logprobs/top_logprobs
    POST /v1/completions        prompt as text or token ids (vLLM's return_token_ids too)
    GET  /v1/models, /health, /metrics (Prometheus text)

Every error is OpenAI's error JSON with a 4xx status (a 5xx only when the engine itself failed);
FastAPI's validation errors and unexpected exceptions are translated the same way, never a
traceback.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, StreamingResponse

from posttrain.engine.interface import Completion, GenerationRequest, SamplingParams
from posttrain.serve.api_errors import ApiError, validation_error
from posttrain.serve.chat_prompt import TOOL_CALL_END, TOOL_CALL_START, build_chat_prompt, parse_reply
from posttrain.serve.engine_worker import ActiveRequest, EngineWorker, QueueFull, SampleUpdate
from posttrain.serve.metrics import ServerMetrics
from posttrain.serve.protocol import ChatCompletionRequest, CompletionRequest, check_max_tokens
from posttrain.serve.text_stream import TextStream

DISCONNECT_POLL_S = 0.5


@dataclass
class ServedModel:
    name: str
    engine: object  # the builtin engine, or serve/vllm_stepper.py's
    tokenizer: object
    max_model_len: int
    variant: str  # standard or fast
    vocab_size: int


def create_app(served: ServedModel, worker: EngineWorker, metrics: ServerMetrics) -> FastAPI:
    app = FastAPI(title="posttrain serve", docs_url=None, redoc_url=None)
    tokenizer = served.tokenizer
    created = int(time.time())

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        metrics.request_done(request.url.path, exc.status)
        return exc.response()

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        error = validation_error(list(exc.errors()))
        metrics.request_done(request.url.path, error.status)
        return error.response()

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        metrics.request_done(request.url.path, 500)
        return ApiError(500, f"internal error: {type(exc).__name__}: {exc}", "server_error").response()

    @app.get("/health")
    async def health() -> JSONResponse:
        if worker.error is not None:
            return JSONResponse({"status": "error", "error": repr(worker.error)}, status_code=503)
        return JSONResponse({"status": "ok", "model": served.name, "variant": served.variant})

    @app.get("/v1/models")
    async def models() -> JSONResponse:
        entry = {"id": served.name, "object": "model", "created": created, "owned_by": "posttrain"}
        entry["max_model_len"] = served.max_model_len
        return JSONResponse({"object": "list", "data": [entry]})

    @app.get("/metrics")
    async def prometheus() -> PlainTextResponse:
        return PlainTextResponse(metrics.render(), media_type="text/plain; version=0.0.4")

    @app.post("/v1/chat/completions")
    async def chat(body: ChatCompletionRequest, request: Request):
        _check_model(body.model)
        try:
            prompt = build_chat_prompt(tokenizer, body)
        except Exception as exc:  # a template that refuses these messages (e.g. bad role order)
            raise ApiError(400, f"messages: cannot apply the chat template: {exc}", param="messages") from None
        max_tokens = body.max_completion_tokens or body.max_tokens
        stops = body.stop_strings + ((TOOL_CALL_END,) if body.forced_function else ())
        top = (body.top_logprobs or 0) if body.logprobs else 0
        params = _params(body, prompt.token_ids, max_tokens, stops, top)
        active = _submit(worker.new_request_id("chatcmpl"), prompt.token_ids, params)
        if body.stream:
            return _sse(_chat_chunks(body, active, prompt.reply_prefix, request), active, request.url.path)
        completions = await _collect(active, request)
        choices = []
        for completion in completions:
            text = prompt.reply_prefix + completion.text
            if body.forced_function and completion.finish_reason == "stop" and not text.endswith(TOOL_CALL_END):
                text += TOOL_CALL_END
            reply = parse_reply(text, body)
            message = {"role": "assistant", "content": reply.content}
            if reply.tool_calls:
                message["tool_calls"] = reply.tool_calls
            choice = {
                "index": completion.sample_index,
                "message": message,
                "logprobs": {"content": _chat_logprobs(completion)} if body.logprobs else None,
                "finish_reason": "tool_calls" if reply.tool_calls else _finish(completion),
            }
            if body.return_token_ids:
                choice["token_ids"] = completion.token_ids
                choice["prompt_token_ids"] = prompt.token_ids
            choices.append(choice)
        metrics.request_done(request.url.path, 200)
        return {
            "id": active.request_id,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": served.name,
            "choices": choices,
            "usage": _usage(prompt.token_ids, completions),
            "system_fingerprint": f"posttrain-{served.variant}",
        }

    @app.post("/v1/completions")
    async def completions(body: CompletionRequest, request: Request):
        _check_model(body.model)
        if body.stream and len(body.prompts) > 1:
            raise ApiError(400, "stream takes one prompt", param="prompt")
        prompts = [_prompt_ids(p) for p in body.prompts]
        top = body.logprobs or 0
        actives = [
            _submit(
                worker.new_request_id("cmpl"), ids, _params(body, ids, body.max_tokens or 16, body.stop_strings, top)
            )
            for ids in prompts
        ]
        if body.stream:
            return _sse(_completion_chunks(body, actives[0], request), actives[0], request.url.path)
        choices, usage_prompt, results = [], [], []
        for number, (ids, active) in enumerate(zip(prompts, actives)):
            for completion in await _collect(active, request):
                choice = {
                    "index": number * body.n + completion.sample_index,
                    "text": completion.text,
                    "logprobs": _completion_logprobs(completion) if body.logprobs is not None else None,
                    "finish_reason": _finish(completion),
                }
                if body.return_token_ids:
                    choice["token_ids"] = completion.token_ids
                    choice["prompt_token_ids"] = ids
                choices.append(choice)
                results.append(completion)
            usage_prompt.extend(ids)
        metrics.request_done(request.url.path, 200)
        return {
            "id": actives[0].request_id,
            "object": "text_completion",
            "created": int(time.time()),
            "model": served.name,
            "choices": choices,
            "usage": _usage(usage_prompt, results),
        }

    # ---- helpers ----------------------------------------------------------------------------

    def _check_model(name: str) -> None:
        if name != served.name:
            raise ApiError(
                404,
                f"The model `{name}` does not exist; this server serves `{served.name}`.",
                param="model",
                code="model_not_found",
            )

    def _prompt_ids(prompt: str | list[int]) -> list[int]:
        if isinstance(prompt, str):
            return list(tokenizer(prompt, add_special_tokens=False)["input_ids"])
        vocab = served.vocab_size
        if any(not 0 <= t < vocab for t in prompt):
            raise ApiError(400, f"prompt: token ids must be in [0, {vocab})", param="prompt")
        return list(prompt)

    def _params(body, prompt_ids: list[int], max_tokens: int | None, stops, top: int) -> SamplingParams:
        check_max_tokens(body, served.max_model_len)
        room = served.max_model_len - len(prompt_ids)
        if not prompt_ids:
            raise ApiError(400, "the prompt is empty", param="messages")
        if room < 1:
            raise ApiError(
                400,
                f"This model's maximum context length is {served.max_model_len} tokens; the prompt has "
                f"{len(prompt_ids)} tokens.",
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

    def _submit(request_id: str, prompt_ids: list[int], params: SamplingParams) -> ActiveRequest:
        try:
            return worker.submit(GenerationRequest(request_id, prompt_ids, params))
        except QueueFull as exc:
            raise ApiError(
                429, str(exc), "rate_limit_error", code="queue_full", headers={"Retry-After": str(exc.retry_after_s)}
            ) from None

    async def _next(active: ActiveRequest, request: Request) -> SampleUpdate:
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
                raise ApiError(
                    408, f"the request passed its deadline of {worker.request_timeout_s:g} s", "timeout_error"
                )
            return item

    async def _collect(active: ActiveRequest, request: Request) -> list[Completion]:
        done: dict[int, Completion] = {}
        try:
            while len(done) < active.request.params.n:
                update = await _next(active, request)
                if update.completion is not None:
                    done[update.sample_index] = update.completion
        except BaseException:
            worker.abort(active.request_id)
            raise
        return [done[i] for i in sorted(done)]

    def _sse(chunks: AsyncIterator[dict], active: ActiveRequest, path: str) -> StreamingResponse:
        async def events():
            try:
                async for chunk in chunks:
                    yield f"data: {json.dumps(chunk)}\n\n"
                metrics.request_done(path, 200)
            except ApiError as exc:
                metrics.request_done(path, exc.status)
                yield f"data: {json.dumps(exc.body())}\n\n"
            finally:
                worker.abort(active.request_id)  # a no-op once finished; frees the engine when the client left
            yield "data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})

    async def _chat_chunks(body: ChatCompletionRequest, active: ActiveRequest, prefix: str, request: Request):
        base = {"id": active.request_id, "object": "chat.completion.chunk", "model": served.name}
        n = body.n
        buffer_tools = body.tools_active
        # with tools, the text before a tool call streams as content; the call (from its tag on)
        # is parsed from the whole reply and sent in the last chunk
        held = (TOOL_CALL_START,) if buffer_tools else ()
        streams = [TextStream(tokenizer, body.stop_strings + held, prefix) for _ in range(n)]
        for index in range(n):
            yield {
                **base,
                "created": int(time.time()),
                "choices": [_delta(index, {"role": "assistant", "content": ""})],
            }
        finished: list[Completion] = []
        while len(finished) < n:
            update = await _next(active, request)
            stream = streams[update.sample_index]
            piece = stream.push(update.token_ids) if update.token_ids else ""
            logprobs = None
            if body.logprobs and update.token_ids:
                logprobs = {"content": _token_logprobs(update.token_ids, update.logprobs, update.top_logprobs)}
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
            finish = _finish(completion)
            if buffer_tools:
                text = prefix + completion.text
                if body.forced_function and completion.finish_reason == "stop" and not text.endswith(TOOL_CALL_END):
                    text += TOOL_CALL_END
                reply = parse_reply(text, body)
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
                "usage": _usage(active.request.prompt_token_ids, finished),
            }

    async def _completion_chunks(body: CompletionRequest, active: ActiveRequest, request: Request):
        base = {"id": active.request_id, "object": "text_completion", "model": served.name}
        streams = [TextStream(tokenizer, body.stop_strings) for _ in range(body.n)]
        finished: list[Completion] = []
        while len(finished) < body.n:
            update = await _next(active, request)
            stream = streams[update.sample_index]
            piece = stream.push(update.token_ids) if update.token_ids else ""
            finish = None
            if update.completion is not None:
                finished.append(update.completion)
                piece += stream.finish(update.completion.text)
                finish = _finish(update.completion)
            if piece or finish:
                choice = {"index": update.sample_index, "text": piece, "logprobs": None, "finish_reason": finish}
                yield {**base, "created": int(time.time()), "choices": [choice]}
        if body.include_usage:
            yield {
                **base,
                "created": int(time.time()),
                "choices": [],
                "usage": _usage(active.request.prompt_token_ids, finished),
            }

    def _token_logprobs(token_ids, logprobs, tops) -> list[dict]:
        entries = []
        for position, (token, logprob) in enumerate(zip(token_ids, logprobs)):
            text = tokenizer.decode([token])
            alternatives = [
                {"token": tokenizer.decode([t]), "logprob": lp, "bytes": list(tokenizer.decode([t]).encode())}
                for t, lp in (tops[position] if position < len(tops) else [])
            ]
            entries.append(
                {"token": text, "logprob": logprob, "bytes": list(text.encode()), "top_logprobs": alternatives}
            )
        return entries

    def _chat_logprobs(completion: Completion) -> list[dict]:
        return _token_logprobs(completion.token_ids, completion.logprobs, completion.top_logprobs or [])

    def _completion_logprobs(completion: Completion) -> dict:
        tokens = [tokenizer.decode([t]) for t in completion.token_ids]
        offsets, position = [], 0
        for token in tokens:
            offsets.append(position)
            position += len(token)
        tops = None
        if completion.top_logprobs:
            tops = [{tokenizer.decode([t]): lp for t, lp in row} for row in completion.top_logprobs]
        return {"tokens": tokens, "token_logprobs": completion.logprobs, "top_logprobs": tops, "text_offset": offsets}

    return app


def _delta(index: int, delta: dict) -> dict:
    return {"index": index, "delta": delta, "logprobs": None, "finish_reason": None}


def _finish(completion: Completion) -> str:
    return "length" if completion.finish_reason == "abort" else completion.finish_reason


def _usage(prompt_ids: list[int], completions: list[Completion]) -> dict:
    output = sum(len(c.token_ids) for c in completions)
    cached = max((c.cached_prompt_tokens or 0 for c in completions), default=0)
    return {
        "prompt_tokens": len(prompt_ids),
        "completion_tokens": output,
        "total_tokens": len(prompt_ids) + output,
        "prompt_tokens_details": {"cached_tokens": cached},
    }
