"""The FastAPI application: OpenAI's chat and completions endpoints over one EngineWorker.

    POST /v1/chat/completions   messages (tools and tool_choice), n, stream (server-sent events),
                                temperature, top_p, max_tokens, stop, seed, logprobs/top_logprobs
                                (serve/chat_completions.py)
    POST /v1/completions        prompt as text or token ids (vLLM's return_token_ids too)
                                (serve/text_completions.py)
    GET  /v1/models, /health, /metrics (Prometheus text)

Every /v1 request first passes serve/request_guard.py (API keys: 401, rate limits: 429, body
size: 413; /health and /metrics are open). Every error is OpenAI's error JSON with a 4xx status
(a 5xx only when the engine itself failed);
FastAPI's validation errors and unexpected exceptions are translated the same way, never a
traceback. The routes share one AppState (serve/app_state.py).
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from posttrain.serve.api_errors import ApiError, validation_error
from posttrain.serve.api_keys import ApiKeys
from posttrain.serve.app_state import AppState, ServedModel
from posttrain.serve.chat_completions import chat_completion
from posttrain.serve.engine_worker import EngineWorker
from posttrain.serve.metrics import ServerMetrics
from posttrain.serve.protocol import ChatCompletionRequest, CompletionRequest
from posttrain.serve.request_guard import GuardSettings, RequestGuard
from posttrain.serve.text_completions import text_completion
from posttrain.serve.trace_recorder import TraceRecorder

__all__ = ["ServedModel", "create_app"]

BAD_INPUT = (400, 404, 405, 422)  # counted as invalid_request refusals (serve/refusals.py)


def create_app(
    served: ServedModel,
    worker: EngineWorker,
    metrics: ServerMetrics,
    recorder: TraceRecorder | None = None,
    guard: GuardSettings | None = None,
) -> FastAPI:
    app = FastAPI(title="posttrain serve", docs_url=None, redoc_url=None)
    app.add_middleware(RequestGuard, settings=guard or GuardSettings(ApiKeys([])), metrics=metrics)
    state = AppState(served, worker, metrics, recorder=recorder)

    def refused(request: Request, error: ApiError) -> JSONResponse:
        metrics.request_done(request.url.path, error.status)
        # a request refused for what it is (bad input) or for the server's capacity; not a 408 or 5xx
        reason = (
            "queue_full" if error.code == "queue_full" else "invalid_request" if error.status in BAD_INPUT else None
        )
        if reason is not None:
            client = request.client.host if request.client else "unknown"
            metrics.refusals.refuse(reason, request.url.path, client, error.message)
        return error.response()

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return refused(request, exc)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return refused(request, validation_error(list(exc.errors())))

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        # the framework's own refusals (a body it cannot decode, an unknown route, a wrong method)
        type_ = "server_error" if exc.status_code >= 500 else "invalid_request_error"
        return refused(request, ApiError(exc.status_code, str(exc.detail), type_, headers=exc.headers))

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
        entry = {"id": served.name, "object": "model", "created": state.created, "owned_by": "posttrain"}
        entry["max_model_len"] = served.max_model_len
        return JSONResponse({"object": "list", "data": [entry]})

    @app.get("/metrics")
    async def prometheus() -> PlainTextResponse:
        return PlainTextResponse(metrics.render(), media_type="text/plain; version=0.0.4")

    @app.post("/v1/chat/completions")
    async def chat(body: ChatCompletionRequest, request: Request):
        return await chat_completion(state, body, request)

    @app.post("/v1/completions")
    async def completions(body: CompletionRequest, request: Request):
        return await text_completion(state, body, request)

    return app
