"""Per-client rate limits: `--rate-limit N/s` or `N/min`, a token bucket per client.

A bucket holds up to N tokens (one period's worth: a client may burst N requests) and refills at
N per period; a request takes one token or is refused with the whole seconds until one is back
(`Retry-After`, at least 1). The clock is passed in, so the arithmetic is tested without waiting.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from posttrain.errors import PosttrainError

PERIODS = {"s": 1.0, "min": 60.0}
# past this many buckets, the ones that have refilled (idle clients) are forgotten: a flood from
# many addresses cannot grow the table without bound
MAX_BUCKETS = 10_000


@dataclass(frozen=True)
class RateLimit:
    requests: int
    period_s: float

    @property
    def per_second(self) -> float:
        return self.requests / self.period_s

    def __str__(self) -> str:
        unit = next(name for name, seconds in PERIODS.items() if seconds == self.period_s)
        return f"{self.requests}/{unit}"


def parse_rate_limit(text: str) -> RateLimit:
    """'60/min' or '5/s' as a RateLimit; anything else is one error line naming the flag."""
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(s|min)\s*", text)
    if match is None or int(match.group(1)) < 1:
        raise PosttrainError(f"--rate-limit: expected N/s or N/min with N >= 1 (e.g. 60/min), got {text!r}")
    return RateLimit(int(match.group(1)), PERIODS[match.group(2)])


class TokenBucket:
    def __init__(self, limit: RateLimit, now: float) -> None:
        self.capacity = float(limit.requests)
        self.rate = limit.per_second
        self.tokens = self.capacity
        self.updated = now

    def _refill(self, now: float) -> None:
        self.tokens = min(self.capacity, self.tokens + max(0.0, now - self.updated) * self.rate)
        self.updated = max(self.updated, now)

    def take(self, now: float) -> int:
        """0 when a token was taken; else the whole seconds (>= 1) until one is back."""
        self._refill(now)
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return 0
        return max(1, math.ceil((1.0 - self.tokens) / self.rate))

    def full(self, now: float) -> bool:
        self._refill(now)
        return self.tokens >= self.capacity


class RateLimiter:
    """A TokenBucket per client (an API key, or an address when the server has no keys)."""

    def __init__(self, limit: RateLimit, max_buckets: int = MAX_BUCKETS) -> None:
        self.limit = limit
        self.max_buckets = max_buckets
        self.buckets: dict[str, TokenBucket] = {}

    def take(self, client: str, now: float) -> int:
        """0 when the client may go on; else its Retry-After in seconds."""
        bucket = self.buckets.get(client)
        if bucket is None:
            if len(self.buckets) >= self.max_buckets:
                self._forget_idle(now)
            bucket = self.buckets[client] = TokenBucket(self.limit, now)
        return bucket.take(now)

    def _forget_idle(self, now: float) -> None:
        """Drop the refilled buckets; if that is not enough, the oldest half (those clients
        start again with a full bucket: lenient, never unbounded)."""
        kept = {name: b for name, b in self.buckets.items() if not b.full(now)}
        if len(kept) >= self.max_buckets:
            kept = dict(list(kept.items())[len(kept) // 2 :])
        self.buckets = kept
