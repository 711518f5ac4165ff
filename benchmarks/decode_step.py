"""The builtin engine's decode step with and without its stacked projections, in one process.

Arm `separate`: every linear layer its own oneDNN call, and a one-row step padded to two rows
inside each call. Arm `stacked` (the default engine): q/k/v and gate/up as one call each
(engine/builtin/concatenated_linear.py), and a one-row step padded once for the whole forward.
Both run the same greedy requests (the serve bench's agent turns or chat questions) back to
back `--pairs` times; the figure is CPU seconds per output token (one torch thread) and the
ratio separate / stacked (above 1: the stacked step is faster). Tokens and logprobs must come
out identical: the change is exact.

    OMP_NUM_THREADS=1 python benchmarks/decode_step.py --workload agent --concurrency 1 4 16
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))

from speculation_ab import workload  # noqa: E402

from posttrain import cpu  # noqa: E402
from posttrain.engine.builtin.engine import BuiltinEngine  # noqa: E402
from posttrain.engine.interface import GenerationRequest, SamplingParams  # noqa: E402
from posttrain.models.loading import load_model, load_tokenizer  # noqa: E402


def engine_for(arm: str, model, tokenizer, concurrency: int) -> BuiltinEngine:
    engine = BuiltinEngine(model, tokenizer, max_num_seqs=concurrency)
    if arm == "separate":
        engine.runner.qkv = engine.runner.gate_up = None
        engine.runner.min_rows = 1
    elif engine.runner.qkv is None:
        raise SystemExit("the stacked projections are off on this machine (no oneDNN, or its check failed)")
    return engine


def run(engine: BuiltinEngine, prompts: list[list[int]], max_tokens: int, requests: int) -> dict:
    greedy = SamplingParams(temperature=0, max_tokens=max_tokens)
    engine.generate([GenerationRequest("warm-up", prompts[0], SamplingParams(temperature=0, max_tokens=8))])
    batch = [GenerationRequest(str(i), prompts[i % len(prompts)], greedy) for i in range(requests)]
    started = time.process_time()
    completions = engine.generate(batch)
    seconds = time.process_time() - started
    tokens = sum(len(c.token_ids) for c in completions)
    return {
        "cpu_s": seconds,
        "output_tokens": tokens,
        "ms_per_token": 1000 * seconds / tokens,
        "outputs": [(c.token_ids, c.logprobs) for c in completions],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", choices=("chat", "agent"), default="agent")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16], help="Sequences decoded together.")
    parser.add_argument("--requests", type=int, default=None, help="Per cell (default: 4 x concurrency).")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None, help="Also write the JSON here.")
    args = parser.parse_args()
    torch.set_num_threads(1)
    tokenizer, model = load_tokenizer("smollm2-135m"), load_model("smollm2-135m")
    prompts, max_tokens = workload(args.workload, tokenizer)
    cells = {}
    for concurrency in args.concurrency:
        requests = args.requests or 4 * concurrency
        engines = {arm: engine_for(arm, model, tokenizer, concurrency) for arm in ("separate", "stacked")}
        runs: dict[str, list[dict]] = {arm: [] for arm in engines}
        for pair in range(args.pairs):
            for arm, engine in engines.items():
                runs[arm].append(run(engine, prompts, max_tokens, requests))
            print(
                f"concurrency {concurrency} pair {pair + 1}: "
                + ", ".join(f"{arm} {r[-1]['ms_per_token']:.1f} ms/token" for arm, r in runs.items()),
                file=sys.stderr,
                flush=True,
            )
        ratios = [s["cpu_s"] / t["cpu_s"] for s, t in zip(runs["separate"], runs["stacked"], strict=True)]
        cells[str(concurrency)] = {
            "requests": requests,
            "ms_per_token": {arm: [round(r["ms_per_token"], 2) for r in rs] for arm, rs in runs.items()},
            "separate_over_stacked": [round(r, 3) for r in ratios],
            "median_ratio": round(statistics.median(ratios), 3),
            "identical_tokens_and_logprobs": all(
                s["outputs"] == t["outputs"] for s, t in zip(runs["separate"], runs["stacked"], strict=True)
            ),
        }
    report = {
        "benchmark": "decode_step",
        "model": "smollm2-135m",
        "workload": args.workload,
        "max_tokens": max_tokens,
        "pairs": args.pairs,
        "cells": cells,
        "cpu": cpu.describe(),
    }
    emit(report, args.out)


def emit(report: dict, out: Path | None) -> None:
    """The report as JSON on stdout, and into `out` if given."""
    text = json.dumps(report, indent=2)
    print(text)
    if out:
        out.write_text(text + "\n")


if __name__ == "__main__":
    main()
