"""A prompt's prefill with its attention on the native kernel against the GEMM path, A/B in one engine.

The prefill chunk's causal attention either runs as invariant_attention.attend_rows' batched
GEMMs over every key, the masked half computed and then filled, or on decode_attention.c
(fast_attention.decode_attention_tokens), which skips the keys a query does not see. Both give
the same bits, so one engine switches between them prompt by prompt: the arms alternate in one
process, each prompt fresh (no prefix-cache hit), and the report gives the median wall time of
a prefill (max_tokens=1 after the prompt) per prompt length, the speedup, and whether one
prompt's tokens and logprobs were equal both ways (two engines, one per arm).

    OMP_NUM_THREADS=1 python benchmarks/prefill_attention_ab.py --lengths 32 96 256 700
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

from posttrain import cpu
from posttrain.engine.builtin.engine import BuiltinEngine
from posttrain.engine.interface import GenerationRequest, SamplingParams
from posttrain.models.loading import load_model, load_tokenizer


def _prompt(length: int, salt: int) -> list[int]:
    """Token ids no earlier prompt starts with: every prefill computes all its tokens."""
    return [(salt * 7919 + length * 13 + i * 31) % 40000 + 100 for i in range(length)]


def _prefill(engine: BuiltinEngine, prompt: list[int], tag: str) -> tuple[list[int], list[float]]:
    completion = engine.generate([GenerationRequest(tag, prompt, SamplingParams(temperature=0, max_tokens=1))])[0]
    return completion.token_ids, completion.logprobs


def measure(model, tokenizer, lengths: list[int], repeats: int) -> dict:
    engine = BuiltinEngine(model, tokenizer, max_num_seqs=1)
    if not engine.runner.native_attention:
        raise SystemExit("the native attention is not available here (see the engine's log)")
    _prefill(engine, [5, 6, 7] * 10, "warm-up")
    cells, salt = {}, 0
    for length in lengths:
        print(f"{length} tokens ...", file=sys.stderr, flush=True)
        seconds: dict[str, list[float]] = {"native": [], "gemm": []}
        for _ in range(repeats):
            for arm in ("native", "gemm"):
                engine.runner.native_prefill = arm == "native"
                salt += 1
                started = time.perf_counter()
                _prefill(engine, _prompt(length, salt), f"{arm}-{salt}")
                seconds[arm].append(time.perf_counter() - started)
        native, gemm = statistics.median(seconds["native"]), statistics.median(seconds["gemm"])
        cells[str(length)] = {
            "native_ms": round(native * 1000, 1),
            "gemm_ms": round(gemm * 1000, 1),
            "speedup": round(gemm / native, 3),
        }
    # the bits: the same prompt on an engine of each arm
    prompt = _prompt(max(lengths), 0)
    other = BuiltinEngine(model, tokenizer, max_num_seqs=1)
    other.runner.native_prefill = False
    engine.runner.native_prefill = True
    same = _prefill(engine, prompt, "bits-native") == _prefill(other, prompt, "bits-gemm")
    return {"cells": cells, "same_tokens_and_logprobs": same}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lengths", type=int, nargs="+", default=[32, 96, 256, 700], help="Prompt lengths (tokens).")
    parser.add_argument("--repeats", type=int, default=5, help="Prefills per arm and length.")
    parser.add_argument("--out", type=Path, help="Also write the JSON here.")
    args = parser.parse_args()
    torch.set_num_threads(1)
    model, tokenizer = load_model("smollm2-135m"), load_tokenizer("smollm2-135m")
    report = {
        "benchmark": "prefill_attention_ab",
        "model": "smollm2-135m",
        **measure(model, tokenizer, args.lengths, args.repeats),
        "cpu": cpu.describe(),
    }
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
