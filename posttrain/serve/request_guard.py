"""What every /v1 request passes before a route sees it, in this order:

1. its API key, where the server has keys: `Authorization: Bearer KEY`, else 401;
2. its client's rate limit, where --rate-limit is set (a bucket per key, or per client address
   on a server without keys): 429 with Retry-After once the bucket is empty;
3. its body's size: more than --max-body-bytes is 413, refused from Content-Length before the
   body is read, or as soon as a body without one grows past the limit.

An ASGI middleware, not a FastAPI dependency: it answers before the body is read or parsed (an
unauthenticated client never makes the server read its body), and it passes the streams through
untouched (a disconnecting client still reaches the route). Refusals are OpenAI's error JSON,
counted and logged by serve/refusals.py. /health and /metrics are open.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from posttrain.serve.api_errors import ApiError
from posttrain.serve.api_keys import ApiKeys
from posttrain.serve.metrics import ServerMetrics
from posttrain.serve.rate_limit import RateLimiter

GUARDED_PREFIX = "/v1"
DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024


@dataclass
class GuardSettings:
    keys: ApiKeys
    limiter: RateLimiter | None = None
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES


class _Refused(Exception):
    def __init__(self, reason: str, error: ApiError, detail: str = "") -> None:
        super().__init__(error.message)
        self.reason, self.error, self.detail = reason, error, detail


class RequestGuard:
    def __init__(
        self, app, settings: GuardSettings, metrics: ServerMetrics, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.app = app
        self.settings = settings
        self.metrics = metrics
        self.clock = clock

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(GUARDED_PREFIX):
            await self.app(scope, receive, send)
            return
        headers = {name.lower(): value for name, value in scope.get("headers", ())}
        client = (scope.get("client") or ("unknown", 0))[0]
        try:
            identity = self._authenticate(headers, client)
            self._limit(identity)
            body = await self._read_body(headers, receive)
        except _Refused as refused:
            self.metrics.request_done(scope["path"], refused.error.status)
            self.metrics.refusals.refuse(refused.reason, scope["path"], client, refused.detail)
            await refused.error.response()(scope, receive, send)
            return
        if body is None:  # the client left while sending its body
            return
        await self.app(scope, _replay(body, receive), send)

    def _authenticate(self, headers: dict[bytes, bytes], client: str) -> str:
        """The identity the rate limit counts against: the key, or the client's address."""
        keys = self.settings.keys
        if not keys:
            return f"address:{client}"
        given = headers.get(b"authorization")
        key = keys.match(given.decode("latin-1") if given is not None else None)
        if key is not None:
            return f"key:{key}"
        if given is None:
            reason, message = "missing_api_key", "You didn't provide an API key: send `Authorization: Bearer KEY`."
        else:
            reason, message = "wrong_api_key", "Incorrect API key provided."
        challenge = {"WWW-Authenticate": "Bearer"}
        raise _Refused(reason, ApiError(401, message, code="invalid_api_key", headers=challenge))

    def _limit(self, identity: str) -> None:
        limiter = self.settings.limiter
        if limiter is None:
            return
        retry_after = limiter.take(identity, self.clock())
        if retry_after:
            message = f"Rate limit of {limiter.limit} requests reached; retry in {retry_after} s."
            error = ApiError(
                429, message, "rate_limit_error", code="rate_limit_exceeded", headers={"Retry-After": str(retry_after)}
            )
            raise _Refused("rate_limited", error, f"limit {limiter.limit}")

    async def _read_body(self, headers: dict[bytes, bytes], receive) -> bytes | None:
        """The whole request body (at most --max-body-bytes), or None when the client left."""
        limit = self.settings.max_body_bytes
        declared = headers.get(b"content-length")
        if declared is not None and declared.strip().isdigit() and int(declared) > limit:
            raise _Refused("body_too_large", _too_large(limit), f"Content-Length {int(declared)}")
        parts, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise _Refused("body_too_large", _too_large(limit), f"more than {limit} bytes sent")
            parts.append(chunk)
            if not message.get("more_body", False):
                return b"".join(parts)


def _too_large(limit: int) -> ApiError:
    return ApiError(413, f"The request body is larger than this server's limit of {limit} bytes.")


def _replay(body: bytes, receive):
    """A receive that hands the route the body already read, then the client's own messages
    (its disconnect, which streaming responses wait for)."""
    sent = False

    async def replay():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
