"""The `openai` backend: any OpenAI-compatible HTTP server (vLLM, SGLang, llama.cpp,
`posttrain serve`, a hosted API), for evaluation. It serves a remote model, so it cannot train
one: `update_weights` refuses.

How a prompt travels (`prompt_format`):
  * "chat" (the default): a request that carries its chat `messages` (the agent loop's and the
    eval runner's do) goes to `/v1/chat/completions` as messages, so any model and any hosted
    chat API works; the remote side applies its own chat template. A request with token ids
    only falls back to `/v1/completions`.
  * "token_ids": every prompt goes to `/v1/completions` as token ids (`prompt=[ids]`), which
    vLLM and `posttrain serve` accept; only right when the server shares the local tokenizer
    (`posttrain eval --tokenizer`), and then the token ids are the exact ones.

What comes back, and how exact it is:
  * text and finish reason: always;
  * token ids: exact when the server returns them, either as a `token_ids` field on each choice
    (vLLM and `posttrain serve` with `extra_body={"return_token_ids": True}`) or as `token_id:N`
    token strings (vLLM with `extra_body={"return_tokens_as_token_ids": True}`). Otherwise, if a
    tokenizer was given, the returned text is re-tokenized: those ids are APPROXIMATE (a text
    does not always encode back to the tokens that produced it, and a stop string cut from the
    text is lost), and the logprobs are kept only when their count matches. Without either,
    token_ids and logprobs are empty and only the text is usable;
  * logprobs: the server's, under the server's convention. vLLM reports log_softmax(logits)
    without temperature by default; start it with `--logprobs-mode processed_logprobs` to get
    this project's convention (temperature-scaled), which is exact when top_p=1 and top_k is off.

Each worker thread keeps one pooled keep-alive connection. Connection errors, 429 and 5xx are
retried with jittered exponential backoff (a 429's Retry-After is honoured); a timeout is not
(the generation may still be running on the server).

`top_k` and `stop_token_ids` are not in OpenAI's schema; they are sent only when set (vLLM and
SGLang accept them). `extra_body` is merged into every request body.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import random
import threading
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

import torch

from posttrain.engine.interface import Completion, FinishReason, GenerationRequest, SamplingParams
from posttrain.errors import PosttrainError

log = logging.getLogger(__name__)

_RETRY_STATUS = {429, 500, 502, 503, 504}
_TOKEN_ID_PREFIX = "token_id:"
PROMPT_FORMATS = ("chat", "token_ids")


class OpenAIServerError(PosttrainError):
    """The server could not be reached, timed out, or answered with an error; names the URL."""


class OpenAIEngine:
    version: int = 0

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key_env: str = "OPENAI_API_KEY",
        timeout_s: float = 120,
        max_concurrency: int = 8,
        tokenizer=None,
        *,
        retries: int = 3,
        backoff_s: float = 1.0,
        logprobs: bool = True,
        extra_body: dict[str, Any] | None = None,
        prompt_format: str = "chat",
    ) -> None:
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")
        if prompt_format not in PROMPT_FORMATS:
            raise ValueError(f"prompt_format must be one of {PROMPT_FORMATS}, got {prompt_format!r}")
        self.prompt_format = prompt_format
        # Accept both "http://host:8000" and "http://host:8000/v1" (what OpenAI clients take).
        root = base_url.rstrip("/")
        self.api_url = root if root.endswith("/v1") else root + "/v1"
        self.model = model
        self.timeout_s = timeout_s
        self.max_concurrency = max_concurrency
        self.tokenizer = tokenizer
        self.retries = retries
        self.backoff_s = backoff_s
        self.logprobs = logprobs
        self.extra_body = dict(extra_body or {})
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        api_key = os.environ.get(api_key_env) if api_key_env else None
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._warned: set[str] = set()
        self._warn_lock = threading.Lock()
        parts = urlsplit(self.api_url)
        self._scheme, self._host, self._port = parts.scheme, parts.hostname or "", parts.port
        self._path_prefix = parts.path.rstrip("/")
        self._local = threading.local()  # each worker thread's pooled connection

    # ---- the InferenceEngine interface ----------------------------------------------------

    def generate(self, requests: list[GenerationRequest]) -> list[Completion]:
        """One HTTP request per GenerationRequest (n samples each), up to max_concurrency at once."""
        if not requests:
            return []
        if len(requests) == 1 or self.max_concurrency == 1:
            groups = [self._generate_one(r) for r in requests]
        else:
            pool = ThreadPoolExecutor(max_workers=min(self.max_concurrency, len(requests)))
            futures = [pool.submit(self._generate_one, r) for r in requests]
            try:
                groups = [f.result() for f in futures]
            except BaseException:
                pool.shutdown(wait=False, cancel_futures=True)
                raise
            pool.shutdown()
        return [c for group in groups for c in group]

    def update_weights(self, named_tensors: Iterable[tuple[str, torch.Tensor]], version: int) -> None:
        raise NotImplementedError("the openai backend serves a remote model; weights cannot be updated")

    # ---- chat, for servers without token-id prompts -----------------------------------------

    def chat(
        self, messages: list[dict[str, Any]], params: SamplingParams = SamplingParams(), request_id: str = "chat"
    ) -> Completion:
        """One reply to `messages` from `/v1/chat/completions`. `prompt_token_ids` is what the
        server reports (vLLM with return_token_ids), else empty."""
        if params.n != 1:
            raise ValueError(f"chat() returns one completion; got SamplingParams.n={params.n}")
        return self._chat_completions(messages, params, request_id, [])[0]

    def _chat_completions(
        self, messages: list[dict[str, Any]], params: SamplingParams, request_id: str, prompt_ids: list[int]
    ) -> list[Completion]:
        # Greedy samples are all the same, and vLLM refuses n>1 with temperature 0: ask for one.
        n = 1 if params.temperature == 0 else params.n
        body = {"model": self.model, "messages": messages, **self._sampling_fields(params)}
        if n > 1:
            body["n"] = n
        if self.logprobs:
            body["logprobs"] = True
        body.update(self.extra_body)
        response = self._post("/chat/completions", body)
        choices = sorted(response.get("choices") or [], key=lambda c: c.get("index", 0))
        if len(choices) != n:
            raise OpenAIServerError(
                f"{self.api_url}/chat/completions answered {len(choices)} choices for request {request_id!r}, "
                f"asked for n={n}: {_short(response)}"
            )
        completions = []
        for sample_index, choice in enumerate(choices * (params.n // n)):
            message = choice.get("message") or {}
            content = (choice.get("logprobs") or {}).get("content") or []
            token_strings = [entry.get("token", "") for entry in content]
            logprobs = [float(entry["logprob"]) for entry in content if entry.get("logprob") is not None]
            text = message.get("content") or ""
            for call in message.get("tool_calls") or []:  # a server that parsed the calls: back to the text
                function = call.get("function") or {}
                text += f'<tool_call>{{"name": {json.dumps(function.get("name"))}, "arguments": '
                text += f"{function.get('arguments') or '{}'}}}</tool_call>"
            token_ids, logprobs = self._token_ids(choice.get("token_ids"), token_strings, logprobs, text)
            reported = choice.get("prompt_token_ids") or response.get("prompt_token_ids")
            completions.append(
                Completion(
                    request_id=request_id,
                    sample_index=sample_index,
                    prompt_token_ids=list(reported or prompt_ids),
                    token_ids=token_ids,
                    logprobs=logprobs,
                    finish_reason=_finish_reason(choice.get("finish_reason")),
                    text=text,
                    version=self.version,
                )
            )
        return completions

    # ---- helpers ----------------------------------------------------------------------------

    def _generate_one(self, request: GenerationRequest) -> list[Completion]:
        params = request.params
        if self.prompt_format == "chat" and request.messages:
            return self._chat_completions(request.messages, params, request.request_id, request.prompt_token_ids)
        # Greedy samples are all the same, and vLLM refuses n>1 with temperature 0: ask for one.
        n = 1 if params.temperature == 0 else params.n
        body = {
            "model": self.model,
            "prompt": [list(request.prompt_token_ids)],
            "n": n,
            **self._sampling_fields(params),
        }
        if self.logprobs:
            body["logprobs"] = 1
        body.update(self.extra_body)
        response = self._post("/completions", body)
        choices = sorted(response.get("choices") or [], key=lambda c: c.get("index", 0))
        if len(choices) != n:
            raise OpenAIServerError(
                f"{self.api_url}/completions answered {len(choices)} choices for "
                f"request {request.request_id!r}, asked for n={n}"
            )
        choices = choices * (params.n // n)
        completions = []
        for sample_index, choice in enumerate(choices):
            lp = choice.get("logprobs") or {}
            text = choice.get("text") or ""
            logprobs = [float(x) for x in lp.get("token_logprobs") or [] if x is not None]
            token_ids, logprobs = self._token_ids(choice.get("token_ids"), lp.get("tokens") or [], logprobs, text)
            completions.append(
                Completion(
                    request_id=request.request_id,
                    sample_index=sample_index,
                    prompt_token_ids=list(request.prompt_token_ids),
                    token_ids=token_ids,
                    logprobs=logprobs,
                    finish_reason=_finish_reason(choice.get("finish_reason")),
                    text=text,
                    version=self.version,
                )
            )
        return completions

    def _sampling_fields(self, params: SamplingParams) -> dict[str, Any]:
        fields: dict[str, Any] = {
            "temperature": params.temperature,
            "top_p": params.top_p,
            "max_tokens": params.max_tokens,
        }
        if params.stop:
            fields["stop"] = list(params.stop)
        if params.seed is not None:
            fields["seed"] = params.seed
        if params.top_k:
            fields["top_k"] = params.top_k
        if params.stop_token_ids:
            fields["stop_token_ids"] = list(params.stop_token_ids)
        return fields

    def _token_ids(
        self, ids: list[int] | None, token_strings: list[str], logprobs: list[float], text: str
    ) -> tuple[list[int], list[float]]:
        """(token_ids, logprobs), exact when the server gave ids, approximate when re-tokenized."""
        if ids is not None:
            return [int(t) for t in ids], logprobs
        if token_strings and all(isinstance(t, str) and t.startswith(_TOKEN_ID_PREFIX) for t in token_strings):
            return [int(t[len(_TOKEN_ID_PREFIX) :]) for t in token_strings], logprobs
        if self.tokenizer is None:
            self._warn_once(
                "no-ids",
                f"{self.api_url} returned no token ids and no tokenizer was given: "
                "completions carry text only (no token_ids, no logprobs)",
            )
            return [], []
        self._warn_once(
            "approx", f"{self.api_url} returned no token ids: re-tokenizing the text, so token ids are approximate"
        )
        approx = list(self.tokenizer.encode(text, add_special_tokens=False))
        return approx, logprobs if len(logprobs) == len(approx) else []

    def _connection(self) -> http.client.HTTPConnection:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            kind = http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
            connection = kind(self._host, self._port, timeout=self.timeout_s)
            self._local.connection = connection
        return connection

    def _drop_connection(self) -> None:
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        url = self.api_url + path
        data = json.dumps(body).encode()
        for attempt in range(self.retries + 1):
            tries = f" after {attempt + 1} tries" if attempt else ""
            try:
                connection = self._connection()
                connection.request("POST", self._path_prefix + path, data, self._headers)
                response = connection.getresponse()
                payload = response.read()
            except TimeoutError:
                self._drop_connection()
                raise OpenAIServerError(f"{url} did not answer within timeout_s={self.timeout_s}") from None
            except (ConnectionError, http.client.HTTPException, OSError) as exc:
                self._drop_connection()  # a stale keep-alive or a server that went away: a fresh one
                if attempt < self.retries:
                    time.sleep(self._backoff(attempt, None))
                    continue
                raise OpenAIServerError(f"cannot reach the OpenAI-compatible server at {url}{tries}: {exc!r}") from None
            if response.getheader("Connection", "").lower() == "close":
                self._drop_connection()
            if response.status >= 400:
                if response.status in _RETRY_STATUS and attempt < self.retries:
                    time.sleep(self._backoff(attempt, response.getheader("Retry-After")))
                    continue
                detail = _error_detail(payload, response.reason)
                raise OpenAIServerError(f"{url} answered HTTP {response.status}{tries}: {detail}") from None
            try:
                return json.loads(payload)
            except json.JSONDecodeError:
                raise OpenAIServerError(f"{url} answered with something that is not JSON: {payload[:200]!r}") from None
        raise AssertionError("unreachable")

    def _backoff(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            try:
                return min(float(retry_after), 60.0)
            except ValueError:
                pass
        return self.backoff_s * (2**attempt) * random.uniform(0.5, 1.5)  # jitter: clients do not retry in step

    def _warn_once(self, key: str, message: str) -> None:
        with self._warn_lock:
            if key in self._warned:
                return
            self._warned.add(key)
        log.warning(message)


def _finish_reason(reason: str | None) -> FinishReason:
    if reason in ("stop", "length"):
        return reason  # type: ignore[return-value]
    if reason in ("eos", "stop_sequence", "end_turn", "tool_calls", "function_call"):
        return "stop"
    return "abort"


def _error_detail(raw: bytes, reason: str) -> str:
    try:
        payload = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return raw[:300].decode(errors="replace") or reason
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])
    if isinstance(payload, dict) and payload.get("detail"):
        return str(payload["detail"])
    return _short(payload)


def _short(payload: Any) -> str:
    text = json.dumps(payload) if not isinstance(payload, str) else payload
    return text if len(text) <= 300 else text[:300] + "..."
