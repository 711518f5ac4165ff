"""Decode steps with a batch's shared prompt prefix read once against read from every row.

The builtin engine reads a prompt prefix common to its whole decode batch (the agent turns'
144-token system prompt) once per step instead of once per sequence (SharedPrefix in
invariant_attention.py). Both ways give the same bits, so one engine can switch between them
from one step to the next: this benchmark alternates them step by step in one process while
closed-loop clients run greedy agent turns (each finished request replaced by the next), so
that a host whose speed drifts over minutes slows both arms alike. It reports the median CPU
time of pure decode steps by batch size in each arm, the closed loop's CPU time, and checks
that the tokens equal those of a run that never shares.

    OMP_NUM_THREADS=1 python benchmarks/decode_shared_prefix_ab.py --concurrency 4 16
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from speculation_ab import closed_loop, workload  # noqa: E402

from posttrain import cpu  # noqa: E402
from posttrain.engine.builtin.engine import BuiltinEngine  # noqa: E402
from posttrain.engine.interface import GenerationRequest, SamplingParams  # noqa: E402
from posttrain.models.loading import load_model, load_tokenizer  # noqa: E402

MIN_STEPS = 5  # batch sizes with fewer decode steps in an arm are left out


def measure(model, tokenizer, concurrency: int, requests: int, repeats: int) -> dict:
    prompts, max_tokens = workload("agent", tokenizer)
    engine = BuiltinEngine(model, tokenizer, max_num_seqs=concurrency)
    engine.runner.decode_cache.reserve(concurrency, 1024)
    greedy = SamplingParams(temperature=0, max_tokens=max_tokens)
    engine.generate([GenerationRequest("warm-up", prompts[0], SamplingParams(temperature=0, max_tokens=8))])
    tail = engine.runner.shared_prefix_min_tail
    run, steps, counter = engine.runner.run, defaultdict(list), [0]

    def alternating(chunks):
        counter[0] += 1
        arm = "once" if counter[0] % 2 else "every_row"
        engine.runner.shared_prefix_min_tail = tail if arm == "once" else None
        started = time.process_time()
        out = run(chunks)
        if all(c.num_tokens == 1 for c in chunks):
            steps[(arm, len(chunks))].append(time.process_time() - started)
        return out

    def batch(tag):
        return [GenerationRequest(f"{tag}-{i}", prompts[i % len(prompts)], greedy) for i in range(requests)]

    engine.runner.run = alternating
    tokens, seconds = None, []
    for repeat in range(repeats):
        engine.blocks.invalidate_prefix_cache()  # each repeat computes its prompts again
        started = time.process_time()
        tokens = [c.token_ids for c in closed_loop(engine, batch(str(repeat)), concurrency)]
        seconds.append(round(time.process_time() - started, 2))
    engine.runner.run, engine.runner.shared_prefix_min_tail = run, None
    engine.blocks.invalidate_prefix_cache()
    never = [c.token_ids for c in closed_loop(engine, batch("never"), concurrency)]
    by_batch = {}
    for size in sorted({size for _, size in steps}):
        once, every = steps.get(("once", size), []), steps.get(("every_row", size), [])
        if len(once) >= MIN_STEPS and len(every) >= MIN_STEPS:
            by_batch[str(size)] = {
                "steps": [len(once), len(every)],
                "once_ms": round(statistics.median(once) * 1e3, 2),
                "every_row_ms": round(statistics.median(every) * 1e3, 2),
                "every_row_over_once": round(statistics.median(every) / statistics.median(once), 3),
            }
    return {
        "requests": requests,
        "closed_loop_cpu_s": seconds,
        "shared_prefix_steps": engine.runner.shared_prefix_steps,
        "decode_step_median_by_batch": by_batch,
        "identical_tokens": tokens == never,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, nargs="+", default=[4, 16], help="Clients in the closed loop.")
    parser.add_argument("--requests", type=int, default=24, help="Agent turns per closed loop (24 are distinct).")
    parser.add_argument("--repeats", type=int, default=3, help="Closed loops per concurrency.")
    parser.add_argument("--out", type=Path, help="Also write the JSON here.")
    args = parser.parse_args()
    torch.set_num_threads(1)
    model, tokenizer = load_model("smollm2-135m"), load_tokenizer("smollm2-135m")
    cells = {}
    for concurrency in args.concurrency:
        print(f"{concurrency} clients ...", file=sys.stderr, flush=True)
        cells[str(concurrency)] = measure(model, tokenizer, concurrency, args.requests, args.repeats)
    report = {"benchmark": "decode_shared_prefix_ab", "model": "smollm2-135m", "cells": cells, "cpu": cpu.describe()}
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
