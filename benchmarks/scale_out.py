"""Async training with rollout workers on a local multi-node Ray cluster: 1 worker node vs 2, and
the recovery from losing a node.

One cluster on this machine: a head (the driver's node: the trainer and the engine; no rollout
resource) and two worker nodes started one after the other with `ray start --resources`.
Node A offers {"one": W, "spread": W/2}, node B {"spread": W/2}, so the same async run (W
rollout workers, each rollout followed by a modelled environment wait of `env_s`, as an agent
episode waits on its sandbox) is placed:

    one_node    worker_resources = { one = 1 }      all W workers on node A
    two_nodes   worker_resources = { spread = 1 }   W/2 workers on node A, W/2 on node B
    recovery    as two_nodes; node B is SIGKILLed (raylet and workers) after `kill_after` steps

Ray's own health-check settings are used (what a user gets). The recovery figures are seconds
from the SIGKILL: until the dispatcher saw the workers die (`death_noticed_s`), until the next
rollout finished (`next_rollout_s`), until the next training step (`next_step_s`).

    python benchmarks/scale_out.py [--size tiny|small] --out benchmarks/results/scale_out.json

Each placement runs twice, in the order one, two, two, one; `steps_per_hour` is their mean,
`steps_per_hour_after_first` the same without each run's first step (new actors import torch).

Prints JSON: {"one_node": {"steps_per_hour", "runs"}, "two_nodes": {...}, "recovery": {...},
"two_over_one", "size", "cpu", ...}. All nodes share this machine's cores: a second node adds
no compute here, so `two_over_one` measures the cost of spreading, not a speed-up.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from functools import partial
from pathlib import Path

SIZES = {
    "tiny": {"steps": 4, "kill_after": 2, "workers": 2, "prompts": 2, "group": 2, "env_s": 0.5},
    "small": {"steps": 12, "kill_after": 4, "workers": 4, "prompts": 4, "group": 2, "env_s": 1.0},
}
NODE = {"num_cpus": 1, "object_store_memory": 80_000_000}
ARMS = [("one_node", "one"), ("two_nodes", "spread")]  # the arm, the resource its workers reserve

CONFIG = """
seed = 3
threads = 1
mode = "async"

[model]
name = "tiny-llama"

[[domains]]
name = "add"
source = "reasoning-gym:basic_arithmetic"
heldout = 2
params = {{ min_terms = 2, max_terms = 2, min_digits = 1, max_digits = 1, operators = ["+"] }}
answer_extraction = "last_number"

[rollout]
prompts_per_step = {prompts}
group_size = {group}
max_new_tokens = 8

[algorithm]
dynamic_sampling = false

[optim]
lr = 1e-3
micro_batch_tokens = 256

[train]
steps = {steps}
checkpoint_every = {steps}

[dispatch]
executor = "ray"
address = "auto"
workers = {workers}
cpus_per_worker = 0
worker_resources = {{ {resource} = 1 }}
"""


def wait_for(condition, what: str, timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout} s")
        time.sleep(0.05)


def alive_nodes_with(resource: str) -> int:
    import ray

    return sum(n["Alive"] and resource in n["Resources"] for n in ray.nodes())


def run_arm(name: str, size: dict, work: Path, resource: str, chaos=None) -> dict:
    from posttrain.pipeline.bench import rollout_with_environment_time, train_one

    config = work / f"{name}.toml"
    config.write_text(CONFIG.format(resource=resource, **size))
    out = work / name
    if chaos is not None:
        thread = threading.Thread(target=chaos, args=(out,), daemon=True)
        thread.start()
    summary = train_one(config, out, partial(rollout_with_environment_time, median_s=size["env_s"], sigma=0.0))
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    loop_s = summary["pipeline"]["train_loop_s"]
    nodes = {w.split("/")[0] for r in records for w in r["rollout_workers"]}
    later = [r["step_s"] for r in records[1:]]
    return {
        "steps": len(records),
        "train_loop_s": round(loop_s, 2),
        "steps_per_hour": round(len(records) / loop_s * 3600, 1),
        # the first step waits for new actors to import torch and the job's modules
        "first_step_s": round(records[0]["step_s"], 2),
        "steps_per_hour_after_first": round(len(later) / sum(later) * 3600, 1),
        "step_s_median": round(statistics.median(r["step_s"] for r in records), 3),
        "worker_nodes_used": len(nodes),
        "dispatch": summary["pipeline"]["dispatch"],
        "load_average_1min": round(os.getloadavg()[0], 2),
    }


def lose_node(node, kill_after: int, figures: dict):
    """SIGKILL `node` once `kill_after` steps are recorded, then time what the run does next."""

    def chaos(out: Path) -> None:
        metrics, status = out / "metrics.jsonl", out / "dispatch.json"

        def steps() -> int:
            return len(metrics.read_text().splitlines()) if metrics.is_file() else 0

        def stats() -> dict:
            try:
                return json.loads(status.read_text())["executor"]["stats"]
            except (OSError, ValueError, KeyError):
                return {}

        wait_for(lambda: steps() >= kill_after, f"{kill_after} steps before the kill", timeout=600)
        steps_before, done_before = steps(), stats().get("completed", 0)
        killed = time.monotonic()
        node.kill()
        since = {}
        while len(since) < 3 and time.monotonic() - killed < 300:
            if "death_noticed_s" not in since and stats().get("worker_deaths", 0) > 0:
                since["death_noticed_s"] = time.monotonic() - killed
            if "next_rollout_s" not in since and stats().get("completed", 0) > done_before:
                since["next_rollout_s"] = time.monotonic() - killed
            if "next_step_s" not in since and steps() > steps_before:
                since["next_step_s"] = time.monotonic() - killed
            time.sleep(0.02)
        figures.update({k: round(v, 2) for k, v in since.items()}, killed_after_step=steps_before)

    return chaos


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="small", help="steps and workers of each run")
    parser.add_argument("--work", type=Path, help="Where the runs go (kept).")
    parser.add_argument("--out", type=Path, help="Write the JSON here too.")
    args = parser.parse_args()
    size = {"name": args.size, **SIZES[args.size]}
    work = args.work or Path(tempfile.mkdtemp(prefix="posttrain-scale-out-"))
    work.mkdir(parents=True, exist_ok=True)

    from posttrain.console import emit_benchmark

    with contextlib.redirect_stdout(sys.stderr):  # Ray's driver prints node deaths to stdout: keep it JSON
        report = run_cluster(size, work)
    emit_benchmark(report, args.out)


def run_cluster(size: dict, work: Path) -> dict:
    import ray

    from posttrain.dispatch.local_cluster import RayNode, start_head
    from posttrain.dispatch.ray_worker import ensure_ray

    half = size["workers"] // 2
    temp = Path(tempfile.mkdtemp(prefix="ptray-", dir="/tmp"))
    started = time.perf_counter()
    head = start_head(temp, include_dashboard="false", **NODE)
    nodes = [head]
    report: dict = {"size": size, "work": str(work)}
    try:
        os.environ["RAY_ADDRESS"] = f"127.0.0.1:{head.port}"  # what address = "auto" joins
        wait_for(lambda: _connects(ensure_ray), "the head comes up")
        for resources, marker in (({"one": size["workers"], "spread": half}, "one"), ({"spread": half}, "spread")):
            nodes.append(RayNode(temp, head=head.port, resources=resources, **NODE))  # one after the other
            wait_for(lambda marker=marker, n=len(nodes) - 1: alive_nodes_with("spread") >= n, f"node {marker} joins")
        report["cluster_up_s"] = round(time.perf_counter() - started, 1)
        # in the order one, two, two, one: the first run of a cluster pays for warm-up (imports in
        # the new actors, the first engine steps), and the machine's load drifts
        runs = {"one_node": [], "two_nodes": []}
        for i, (arm, resource) in enumerate(ARMS + ARMS[::-1]):
            runs[arm].append(run_arm(f"{arm}-{i}", size, work, resource))
        for arm, results in runs.items():
            report[arm] = {
                key: round(statistics.mean(r[key] for r in results), 1)
                for key in ("steps_per_hour", "steps_per_hour_after_first")
            } | {"runs": results}
        figures: dict = {}
        report["recovery"] = run_arm("recovery", size, work, "spread", lose_node(nodes[2], size["kill_after"], figures))
        report["recovery"].update(figures)
    finally:
        ray.shutdown()
        for node in reversed(nodes):
            node.stop()
        shutil.rmtree(temp, ignore_errors=True)
    report["two_over_one"] = {
        key: round(report["two_nodes"][key] / report["one_node"][key], 3)
        for key in ("steps_per_hour", "steps_per_hour_after_first")
    }
    report["machine"] = {"cpus": os.cpu_count(), "nodes_share_the_machine": True}
    report["wall_s"] = round(time.perf_counter() - started, 1)
    return report


def _connects(ensure_ray) -> bool:
    try:
        ensure_ray("auto")
        return True
    except ConnectionError:
        time.sleep(1)
        return False


if __name__ == "__main__":
    main()
