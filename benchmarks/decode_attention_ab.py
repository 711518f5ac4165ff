"""Two ways of computing a decode step's attention that give the same bits, A/B in one engine.

    --compare native-attention   decode_attention.c (fast_attention.py) against the GEMM path
                                 (invariant_attention.attend_rows), the shared prefix read once
                                 in both
    --compare shared-prefix      on the GEMM path: a prompt prefix common to the decode batch
                                 (the agent turns' 144-token system prompt) read once per step
                                 (SharedPrefix) against read from every sequence's row

Both ways of each pair give the same bits, so one engine switches between them from one step to
the next: the arms alternate step by step in one process while closed-loop clients run greedy
agent turns (each finished request replaced by the next), so that a host whose speed drifts over
minutes slows both arms alike. It reports the median CPU time of pure decode steps by batch size
in each arm, the closed loop's CPU time, and checks that the tokens equal those of a run on the
second arm alone.

    OMP_NUM_THREADS=1 python benchmarks/decode_attention_ab.py --compare native-attention --concurrency 1 4 16
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from speculation_ab import closed_loop, workload  # noqa: E402

from posttrain import cpu  # noqa: E402
from posttrain.engine.builtin.engine import BuiltinEngine  # noqa: E402
from posttrain.engine.interface import GenerationRequest, SamplingParams  # noqa: E402
from posttrain.models.loading import load_model, load_tokenizer  # noqa: E402

MIN_STEPS = 5  # batch sizes with fewer decode steps in an arm are left out


def _arms(runner, compare: str) -> tuple[tuple[str, str], Callable[[str], None]]:
    """The two arms' names and a function that switches the runner to one of them."""
    native, tail = runner.native_attention, runner.shared_prefix_min_tail
    if compare == "native-attention":
        if not native:
            raise SystemExit("the native decode attention is not available here (see the engine's log)")

        def switch(arm):
            runner.native_attention = arm == "native"

        return ("native", "gemm"), switch

    def switch(arm):
        runner.native_attention = False
        runner.shared_prefix_min_tail = tail if arm == "once" else None

    return ("once", "every_row"), switch


def measure(model, tokenizer, compare: str, concurrency: int, requests: int, repeats: int) -> dict:
    prompts, max_tokens = workload("agent", tokenizer)
    engine = BuiltinEngine(model, tokenizer, max_num_seqs=concurrency)
    engine.runner.decode_cache.reserve(concurrency, 1024)
    greedy = SamplingParams(temperature=0, max_tokens=max_tokens)
    engine.generate([GenerationRequest("warm-up", prompts[0], SamplingParams(temperature=0, max_tokens=8))])
    (first, second), switch = _arms(engine.runner, compare)
    run, steps, counter = engine.runner.run, defaultdict(list), [0]

    def alternating(chunks):
        counter[0] += 1
        arm = first if counter[0] % 2 else second
        switch(arm)
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
    engine.runner.run = run
    switch(second)
    engine.blocks.invalidate_prefix_cache()
    alone = [c.token_ids for c in closed_loop(engine, batch("alone"), concurrency)]
    by_batch = {}
    for size in sorted({size for _, size in steps}):
        a, b = steps.get((first, size), []), steps.get((second, size), [])
        if len(a) >= MIN_STEPS and len(b) >= MIN_STEPS:
            by_batch[str(size)] = {
                "steps": [len(a), len(b)],
                f"{first}_ms": round(statistics.median(a) * 1e3, 2),
                f"{second}_ms": round(statistics.median(b) * 1e3, 2),
                f"{second}_over_{first}": round(statistics.median(b) / statistics.median(a), 3),
            }
    return {
        "requests": requests,
        "closed_loop_cpu_s": seconds,
        "shared_prefix_steps": engine.runner.shared_prefix_steps,
        "decode_step_median_by_batch": by_batch,
        "identical_tokens": tokens == alone,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--compare",
        choices=("native-attention", "shared-prefix"),
        default="native-attention",
        help="Which pair of attention paths to alternate (see above).",
    )
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
        cells[str(concurrency)] = measure(model, tokenizer, args.compare, concurrency, args.requests, args.repeats)
    report = {
        "benchmark": "decode_attention_ab",
        "compare": args.compare,
        "model": "smollm2-135m",
        "cells": cells,
        "cpu": cpu.describe(),
    }
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
