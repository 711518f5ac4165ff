"""The `openai` backend: any OpenAI-compatible HTTP server (vLLM, SGLang, llama.cpp, a hosted
API), for evaluation. It serves a remote model, so it cannot train one: `update_weights` refuses.

Prompts go to `/v1/completions` as token ids (`prompt=[ids]`), which vLLM and most servers
accept; `chat()` uses `/v1/chat/completions` for servers that only take messages.

What comes back, and how exact it is:
  * text and finish reason: always;
  * token ids: exact when the server returns them, either as a `token_ids` field on each choice
    (vLLM with `extra_body={"return_token_ids": True}`) or as `token_id:N` token strings (vLLM
    with `extra_body={"return_tokens_as_token_ids": True}`). Otherwise, if a tokenizer was given,
    the returned text is re-tokenized: those ids are APPROXIMATE (a text does not always encode
    back to the tokens that produced it, and a stop string cut from the text is lost), and the
    logprobs are kept only when their count matches. Without either, token_ids and logprobs are
    empty and only the text is usable;
  * logprobs: the server's `token_logprobs`, under the server's convention. vLLM reports
    log_softmax(logits) without temperature by default; start it with
    `--logprobs-mode processed_logprobs` to get this project's convention (temperature-scaled),
    which is exact when top_p=1 and top_k is off.

`top_k` and `stop_token_ids` are not in OpenAI's schema; they are sent only when set (vLLM and
SGLang accept them). `extra_body` is merged into every request body.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import torch

from posttrain.engine.interface import Completion, FinishReason, GenerationRequest, SamplingParams
from posttrain.errors import PosttrainError

log = logging.getLogger(__name__)

_RETRY_STATUS = {429, 500, 502, 503, 504}
_TOKEN_ID_PREFIX = "token_id:"


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
    ) -> None:
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")
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
        body = {"model": self.model, "messages": messages, **self._sampling_fields(params)}
        if self.logprobs:
            body["logprobs"] = True
        body.update(self.extra_body)
        response = self._post("/chat/completions", body)
        choices = response.get("choices") or []
        if not choices:
            raise OpenAIServerError(f"{self.api_url}/chat/completions answered with no choices: {_short(response)}")
        choice = choices[0]
        message = choice.get("message") or {}
        content = (choice.get("logprobs") or {}).get("content") or []
        token_strings = [entry.get("token", "") for entry in content]
        logprobs = [float(entry["logprob"]) for entry in content if entry.get("logprob") is not None]
        text = message.get("content") or ""
        token_ids, logprobs = self._token_ids(choice.get("token_ids"), token_strings, logprobs, text)
        prompt_ids = choice.get("prompt_token_ids") or response.get("prompt_token_ids") or []
        return Completion(
            request_id=request_id,
            sample_index=0,
            prompt_token_ids=list(prompt_ids),
            token_ids=token_ids,
            logprobs=logprobs,
            finish_reason=_finish_reason(choice.get("finish_reason")),
            text=text,
            version=self.version,
        )

    # ---- helpers ----------------------------------------------------------------------------

    def _generate_one(self, request: GenerationRequest) -> list[Completion]:
        params = request.params
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

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        url = self.api_url + path
        data = json.dumps(body).encode()
        for attempt in range(self.retries + 1):
            request = urllib.request.Request(url, data=data, headers=self._headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                    payload = response.read()
            except urllib.error.HTTPError as exc:
                detail = _error_detail(exc)
                if exc.code in _RETRY_STATUS and attempt < self.retries:
                    time.sleep(self._backoff(attempt, exc.headers.get("Retry-After") if exc.headers else None))
                    continue
                tries = f" after {attempt + 1} tries" if attempt else ""
                raise OpenAIServerError(f"{url} answered HTTP {exc.code}{tries}: {detail}") from None
            except TimeoutError:
                raise OpenAIServerError(f"{url} did not answer within timeout_s={self.timeout_s}") from None
            except urllib.error.URLError as exc:
                if isinstance(exc.reason, (TimeoutError, socket.timeout)):
                    raise OpenAIServerError(f"{url} did not answer within timeout_s={self.timeout_s}") from None
                raise OpenAIServerError(f"cannot reach the OpenAI-compatible server at {url}: {exc.reason}") from None
            except (http.client.HTTPException, OSError) as exc:
                raise OpenAIServerError(f"the connection to {url} failed: {exc!r}") from None
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
        return self.backoff_s * (2**attempt)

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


def _error_detail(exc: urllib.error.HTTPError) -> str:
    try:
        raw = exc.read()
    except Exception:  # the body is a courtesy; the status code is the error
        return exc.reason or ""
    try:
        payload = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return raw[:300].decode(errors="replace") or (exc.reason or "")
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])
    if isinstance(payload, dict) and payload.get("detail"):
        return str(payload["detail"])
    return _short(payload)


def _short(payload: Any) -> str:
    text = json.dumps(payload) if not isinstance(payload, str) else payload
    return text if len(text) <= 300 else text[:300] + "..."
