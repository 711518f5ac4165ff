"""The server's metrics, in Prometheus text exposition format (no client library needed).

Counters (refused requests by reason among them: serve/refusals.py) and histograms are updated
from the engine thread and the HTTP handlers; gauges (queue length, running requests, cache hit
rate, acceptance rate, tokens per second, the engine's live sequences and KV blocks in use) are
read when /metrics is scraped.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

from posttrain.serve.refusals import Refusals

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
PREFIX = "posttrain_serve_"


class Histogram:
    def __init__(self, buckets: tuple[float, ...] = LATENCY_BUCKETS) -> None:
        self.buckets = buckets
        self.counts = [0] * len(buckets)
        self.total = 0
        self.sum = 0.0

    def observe(self, value: float) -> None:
        for index, bound in enumerate(self.buckets):
            if value <= bound:
                self.counts[index] += 1
        self.total += 1
        self.sum += value


class ServerMetrics:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests: dict[tuple[str, int], int] = {}  # (endpoint, status) -> count
        self.output_tokens = 0
        self.prompt_tokens = 0
        self.time_to_first_token = Histogram()
        self.inter_token_latency = Histogram()
        self.request_latency = Histogram()
        self._recent: deque[tuple[float, int]] = deque()  # (time, output tokens) over the last window
        self.gauges: dict[str, Callable[[], float]] = {}
        self.refusals = Refusals()  # 401, 413, 429 and 400 by reason (serve/refusals.py)

    def request_done(self, endpoint: str, status: int) -> None:
        with self._lock:
            self.requests[(endpoint, status)] = self.requests.get((endpoint, status), 0) + 1

    def tokens(self, count: int) -> None:
        with self._lock:
            self.output_tokens += count
            now = time.monotonic()
            self._recent.append((now, count))

    def observe(self, histogram: Histogram, value: float) -> None:
        with self._lock:
            histogram.observe(value)

    def tokens_per_second(self, window_s: float = 10.0) -> float:
        with self._lock:
            horizon = time.monotonic() - window_s
            while self._recent and self._recent[0][0] < horizon:
                self._recent.popleft()
            return sum(count for _, count in self._recent) / window_s

    def render(self) -> str:
        lines: list[str] = []

        def metric(name: str, kind: str, help_: str) -> None:
            lines.append(f"# HELP {PREFIX}{name} {help_}")
            lines.append(f"# TYPE {PREFIX}{name} {kind}")

        metric("requests_total", "counter", "Finished HTTP requests by endpoint and status code.")
        with self._lock:
            for (endpoint, status), count in sorted(self.requests.items()):
                lines.append(f'{PREFIX}requests_total{{endpoint="{endpoint}",status="{status}"}} {count}')
            metric("output_tokens_total", "counter", "Generated tokens.")
            lines.append(f"{PREFIX}output_tokens_total {self.output_tokens}")
            metric("prompt_tokens_total", "counter", "Prompt tokens of admitted requests.")
            lines.append(f"{PREFIX}prompt_tokens_total {self.prompt_tokens}")
            for name, histogram, help_ in (
                ("time_to_first_token_seconds", self.time_to_first_token, "From arrival to the first token."),
                ("inter_token_latency_seconds", self.inter_token_latency, "Between a sample's successive tokens."),
                ("request_latency_seconds", self.request_latency, "From arrival to the last token."),
            ):
                metric(name, "histogram", help_)
                for bound, count in zip(histogram.buckets, histogram.counts):
                    lines.append(f'{PREFIX}{name}_bucket{{le="{bound}"}} {count}')
                lines.append(f'{PREFIX}{name}_bucket{{le="+Inf"}} {histogram.total}')
                lines.append(f"{PREFIX}{name}_sum {histogram.sum}")
                lines.append(f"{PREFIX}{name}_count {histogram.total}")
        lines.extend(self.refusals.render(PREFIX))
        metric("output_tokens_per_second", "gauge", "Generated tokens per second over the last 10 s.")
        lines.append(f"{PREFIX}output_tokens_per_second {self.tokens_per_second()}")
        for name, read in self.gauges.items():
            metric(name, "gauge", name.replace("_", " ") + ".")
            lines.append(f"{PREFIX}{name} {float(read())}")
        return "\n".join(lines) + "\n"
