"""The builtin engine's decode step in this tree against another commit's, on the same requests.

Each arm runs in its own process with its own tree on the path (a `git worktree` of `--base`
for the baseline), loads SmolLM2-135M, and generates greedy agent turns at a concurrency; the
`--step`-th decode step of all the sequences together (the agent turns' prompts are 170-300
tokens) is captured and re-run `--reps` times (the same KV writes each time), and the arm
reports the step's minimum and median CPU time. The two arms
alternate `--pairs` times, so a busy host slows both alike; the minimum is the figure a noisy
host disturbs least. The tokens and logprobs of the whole generation must come out identical
in both arms for a change that claims to be exact.

    OMP_NUM_THREADS=1 python benchmarks/decode_step_ab.py --base HEAD~1 --concurrency 1 4 16
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def measure(concurrency: int, step: int, reps: int, max_tokens: int) -> dict:
    """One arm, in this process: the captured step's CPU times and a digest of the outputs."""
    import torch

    sys.path.insert(0, str(Path(__file__).parent))
    from speculation_ab import workload

    from posttrain.engine.builtin.engine import BuiltinEngine
    from posttrain.engine.interface import GenerationRequest, SamplingParams
    from posttrain.models.loading import load_model, load_tokenizer

    torch.set_num_threads(1)
    tokenizer, model = load_tokenizer("smollm2-135m"), load_model("smollm2-135m")
    engine = BuiltinEngine(model, tokenizer, max_num_seqs=concurrency)
    prompts, _ = workload("agent", tokenizer)
    run, times, decode_steps = engine.runner.run, [], []

    def timed_run(chunks):
        if len(chunks) == concurrency and all(c.num_tokens == 1 for c in chunks):
            decode_steps.append(len(decode_steps))
        if len(decode_steps) == step and not times:
            for _ in range(reps):
                started = time.process_time()
                run(chunks)
                times.append(time.process_time() - started)
        return run(chunks)

    engine.runner.run = timed_run
    greedy = SamplingParams(temperature=0, max_tokens=max_tokens)
    requests = [GenerationRequest(str(i), prompts[i % len(prompts)], greedy) for i in range(concurrency)]
    completions = engine.generate(requests)
    if not times:
        raise SystemExit(f"the {concurrency} sequences did not decode {step} steps together")
    digest = hashlib.sha256(json.dumps([(c.token_ids, c.logprobs) for c in completions]).encode()).hexdigest()
    return {"min_ms": 1000 * min(times), "median_ms": 1000 * statistics.median(times), "outputs_sha256": digest}


def arm(tree: Path, concurrency: int, args) -> dict:
    command = [sys.executable, __file__, "--measure", str(concurrency), "--step", str(args.step)]
    command += ["--reps", str(args.reps), "--max-tokens", str(args.max_tokens)]
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(command, env=env, cwd=tree, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the arm in {tree} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--base", default="HEAD", help="The baseline commit (default HEAD: the tree's uncommitted change)."
    )
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16], help="Sequences decoded together.")
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--reps", type=int, default=40, help="Re-runs of the captured step per arm and pair.")
    parser.add_argument("--step", type=int, default=24, help="Capture the sequences' decode step number N together.")
    parser.add_argument("--max-tokens", type=int, default=80)
    parser.add_argument("--out", type=Path, default=None, help="Also write the JSON here.")
    parser.add_argument("--measure", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure is not None:
        print(json.dumps(measure(args.measure, args.step, args.reps, args.max_tokens)))
        return

    from decode_step import emit

    from posttrain import cpu

    commit = subprocess.run(["git", "rev-parse", args.base], cwd=ROOT, capture_output=True, text=True, check=True)
    base_commit = commit.stdout.strip()
    with tempfile.TemporaryDirectory(prefix="decode-ab-") as temp:
        base = Path(temp) / "base"
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(base), base_commit], cwd=ROOT, check=True, capture_output=True
        )
        try:
            cells = {}
            for concurrency in args.concurrency:
                runs = {"base": [], "this": []}
                for pair in range(args.pairs):
                    for name, tree in (("base", base), ("this", ROOT)):
                        runs[name].append(arm(tree, concurrency, args))
                    latest = {name: f"{r[-1]['min_ms']:.2f}" for name, r in runs.items()}
                    sys.stderr.write(f"concurrency {concurrency} pair {pair + 1}: step min (ms) {latest}\n")
                by_min = [b["min_ms"] / t["min_ms"] for b, t in zip(runs["base"], runs["this"], strict=True)]
                by_median = [b["median_ms"] / t["median_ms"] for b, t in zip(runs["base"], runs["this"], strict=True)]
                cells[str(concurrency)] = {
                    "step_min_ms": {n: [round(r["min_ms"], 2) for r in rs] for n, rs in runs.items()},
                    "step_median_ms": {n: [round(r["median_ms"], 2) for r in rs] for n, rs in runs.items()},
                    "base_over_this_by_min": [round(r, 3) for r in by_min],
                    "median_of_min_ratios": round(statistics.median(by_min), 3),
                    "median_of_median_ratios": round(statistics.median(by_median), 3),
                    "identical_tokens_and_logprobs": len({r["outputs_sha256"] for rs in runs.values() for r in rs})
                    == 1,
                }
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT, check=False)
    report = {
        "benchmark": "decode_step_ab",
        "model": "smollm2-135m",
        "base": base_commit,
        "this": "working tree",
        "step": args.step,
        "reps": args.reps,
        "pairs": args.pairs,
        "cells": cells,
        "cpu": cpu.describe(),
    }
    emit(report, args.out)


if __name__ == "__main__":
    main()
