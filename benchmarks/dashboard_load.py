"""The dashboard's latency on a run of 1,000 steps and 100,000 samples: p50 and p95 per endpoint.

The run is synthetic: written with the real TrajectoryStore (1,000 steps of 100 samples of 1-48
completion tokens after a 64-token prompt), with made-up values; metrics.jsonl is written in one
go (the real sink fsyncs each record: 1,000 fsyncs would be most of the time). The dashboard
runs in uvicorn in this process; each endpoint a page calls is asked `--repeats` times over HTTP.

    python benchmarks/dashboard_load.py [--steps 1000] [--samples-per-step 100] [--repeats 20] --out FILE.json

Prints JSON: {"samples", "steps", "endpoints": {path: {"p50_s", "p95_s", "max_s"}}, "slowest_p95_s", "cpu"}.
The goal: every page under 1 s.
"""

from __future__ import annotations

import argparse
import json
import random
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.request import urlopen

from posttrain.console import emit_benchmark
from posttrain.observe.trajectory_store import TrajectoryStore

DOMAINS = ("add", "count", "terminal")


def write_synthetic_run(root: Path, steps: int = 1000, samples_per_step: int = 100, tokens: int = 48) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.toml").write_text(f'[model]\nname = "tiny-llama"\n\n[train]\nsteps = {steps}\n')
    rng = random.Random(0)
    store = TrajectoryStore(root / "trajectories.sqlite")
    store.db.execute("PRAGMA synchronous=OFF")  # made-up data: 1,000 fsynced commits would be most of the time
    records = []
    prompt = list(range(1, 65))
    for step in range(1, steps + 1):
        rows = []
        for index in range(samples_per_step):
            length = rng.randint(1, tokens)
            reward = float(rng.random() < 0.3)
            rows.append(
                {
                    "task_id": f"{DOMAINS[index % 3]}/{index // 2}",
                    "domain": DOMAINS[index % 3],
                    "sample_index": index % 2,
                    "policy_version": step - 1,
                    "prompt_token_ids": prompt,
                    "completion_token_ids": [rng.randrange(49152) for _ in range(length)],
                    "logprobs": [round(-rng.random() * 5, 4) for _ in range(length)],
                    "text": "x" * length,
                    "finish_reason": "stop",
                    "reward": reward,
                    "passed": reward > 0,
                    "details": {"expected": "1"},
                    "advantage": reward - 0.3,
                }
            )
        store.add_groups(step, "train", rows)
        records.append({"step": step, "loss": rng.random(), "reward_mean": 0.3, "kl": 0.01 * step})
    store.close()
    (root / "metrics.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))
    return root


# what the pages ask for: the runs list, curves (whole and polled), the steps, sample pages with
# each filter, a filter that matches nothing (a scan of the whole store), a deep page, one sample
ENDPOINTS = [
    "/api/directories",
    "/api/directories/0",
    "/api/runs/0/metrics",
    "/api/runs/0/metrics?after=990",
    "/api/runs/0/steps",
    "/api/runs/0/samples",
    "/api/runs/0/samples?step=500",
    "/api/runs/0/samples?domain=terminal&min_reward=1",
    "/api/runs/0/samples?task=count/7&passed=false",
    "/api/runs/0/samples?min_length=40&max_length=45",
    "/api/runs/0/samples?task=no-such-task",
    "/api/runs/0/samples?after=99900",
    "/api/runs/0/samples/55555",
    "/run/0/samples",
]


class ServedDashboard:
    """uvicorn serving the dashboard over `paths` in a thread of this process, on a free port."""

    def __init__(self, paths: list[Path]) -> None:
        import uvicorn

        from posttrain.dashboard.app import create_app

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        self.server = uvicorn.Server(uvicorn.Config(create_app(paths), port=port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> ServedDashboard:
        self.thread.start()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                urlopen(self.url + "/api/directories", timeout=2).read()
                return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the dashboard did not start")

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def timed_get(url: str) -> float:
    start = time.perf_counter()
    with urlopen(url, timeout=60) as response:
        response.read()
    return time.perf_counter() - start


def measure(run: Path, repeats: int) -> dict:
    with ServedDashboard([run]) as served:
        timed_get(served.url + "/api/runs/0/samples/1")  # the tokenizer loads on the first sample
        endpoints = {}
        for path in ENDPOINTS:
            times = sorted(timed_get(served.url + path) for _ in range(repeats))
            endpoints[path] = {
                "p50_s": round(times[len(times) // 2], 5),
                "p95_s": round(times[min(len(times) - 1, int(0.95 * len(times)))], 5),
                "max_s": round(times[-1], 5),
            }
    return {"endpoints": endpoints, "slowest_p95_s": max(e["p95_s"] for e in endpoints.values())}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--samples-per-step", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        start = time.perf_counter()
        run = write_synthetic_run(Path(scratch) / "run", args.steps, args.samples_per_step)
        written_s = time.perf_counter() - start
        report = measure(run, args.repeats)
    emit_benchmark(
        {
            "steps": args.steps,
            "samples": args.steps * args.samples_per_step,
            "repeats": args.repeats,
            "write_s": round(written_s, 2),
            **report,
        },
        args.out,
    )


if __name__ == "__main__":
    sys.exit(main())
