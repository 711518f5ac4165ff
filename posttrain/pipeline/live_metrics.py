"""A live run's own Prometheus endpoint (`[logging] metrics_port`): what the rollout engine and
the dispatcher are doing now (queues, workers, retries, the policy version) and the latest step's
record (tokens/s, step phases, rewards, failure modes), for a scraper watching the run. The
address goes to RUN_DIR/metrics_endpoint.json and the console."""

from __future__ import annotations

import os
from pathlib import Path

from posttrain.config import RunConfig
from posttrain.errors import PosttrainError
from posttrain.storage.atomic import write_json_atomic

ENDPOINT_FILE = "metrics_endpoint.json"


class LiveMetricsEndpoint:
    def __init__(self, config: RunConfig, run_root: Path, rollouts, say) -> None:
        try:
            from prometheus_client import start_http_server
        except ImportError as exc:
            raise PosttrainError(
                "logging.metrics_port: prometheus_client is not installed (pip install prometheus_client)"
            ) from exc
        from posttrain.observe.prometheus_exposition import registry_of

        self.run, self.rollouts, self.last = run_root.name, rollouts, None
        host = config.logging.metrics_host
        self.server, self.thread = start_http_server(
            config.logging.metrics_port, addr=host, registry=registry_of(self._latest)
        )
        self.url = f"http://{host}:{self.server.server_port}/metrics"
        write_json_atomic(run_root / ENDPOINT_FILE, {"url": self.url, "pid": os.getpid()})
        say(f"metrics: {self.url}")

    def observe(self, record: dict) -> None:
        self.last = record

    def _latest(self):
        live = getattr(self.rollouts, "live_gauges", dict)()
        yield self.run, True, {**(self.last or {}), **live}

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def open_live_metrics(config: RunConfig, run_root: Path, rollouts, say) -> LiveMetricsEndpoint | None:
    if config.logging.metrics_port is None:
        return None
    return LiveMetricsEndpoint(config, run_root, rollouts, say)
