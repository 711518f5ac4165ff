"""Requests the server refused, counted by reason, and logged without flooding the log.

Reasons: missing_api_key and wrong_api_key (401), rate_limited (429, --rate-limit), queue_full
(429, --max-queue), body_too_large (413), invalid_request (400: a body that is not JSON or not a
valid request). The first refusal of a reason is logged at once, one line; later ones of that
reason at most one line per LOG_INTERVAL_S, saying how many were refused since. The counts are
in /metrics as posttrain_serve_refused_total{reason=...}.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

LOG_INTERVAL_S = 60.0
STATUS = {
    "missing_api_key": 401,
    "wrong_api_key": 401,
    "rate_limited": 429,
    "queue_full": 429,
    "body_too_large": 413,
    "invalid_request": 400,
}

log = logging.getLogger(__name__)


class Refusals:
    def __init__(self, clock: Callable[[], float] = time.monotonic, interval_s: float = LOG_INTERVAL_S) -> None:
        self.clock = clock
        self.interval_s = interval_s
        self.counts: dict[str, int] = {}
        self._logged_at: dict[str, float] = {}  # reason -> when its last line was written
        self._unlogged: dict[str, int] = {}  # reason -> refusals since its last line
        self._lock = threading.Lock()

    def refuse(self, reason: str, path: str, client: str, detail: str = "") -> str | None:
        """Count a refusal; returns the log line written for it, if one was."""
        now = self.clock()
        with self._lock:
            self.counts[reason] = self.counts.get(reason, 0) + 1
            self._unlogged[reason] = self._unlogged.get(reason, 0) + 1
            last = self._logged_at.get(reason)
            if last is not None and now - last < self.interval_s:
                return None
            count, self._unlogged[reason] = self._unlogged[reason], 0
            self._logged_at[reason] = now
        what = f"{STATUS.get(reason, '4xx')} {reason}"
        tail = f" ({detail})" if detail else ""
        if last is None:
            line = (
                f"serve: refused {path} from {client}: {what}{tail}; refusals are counted in /metrics "
                f"(posttrain_serve_refused_total) and logged at most once per {self.interval_s:g} s a reason"
            )
        else:
            line = (
                f"serve: {count} requests refused ({what}) in the last {now - last:.0f} s; "
                f"latest {path} from {client}{tail}"
            )
        log.warning(line)
        return line

    def render(self, prefix: str) -> list[str]:
        lines = [
            f"# HELP {prefix}refused_total Requests refused before reaching the engine, by reason.",
            f"# TYPE {prefix}refused_total counter",
        ]
        with self._lock:
            for reason in sorted(set(STATUS) | set(self.counts)):
                lines.append(f'{prefix}refused_total{{reason="{reason}"}} {self.counts.get(reason, 0)}')
        return lines
