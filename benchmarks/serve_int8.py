"""Int8 weights for the fast variant: held-out accuracy against standard's, and the speed.

The fixed eval is the quickstart's held-out set (examples/quickstart.toml: 256 arithmetic
questions from two domains, one greedy reply each, verified), evaluated in process through
three engines built on SmolLM2-135M: standard (float32), fast (float32 + speculative
decoding: lossless, so its accuracy is standard's) and fast with int8 weights. Reported: each
arm's accuracy and eval wall time, the paired bootstrap interval of int8 minus standard over
the same items (posttrain.evaluate.statistics), and output tokens/s of each arm's greedy
replies to the eval, relative to standard's. The arms run back to back; the machine's load is
recorded with each.

    OMP_NUM_THREADS=1 python benchmarks/serve_int8.py --out benchmarks/results/serve_int8.json
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import torch

from posttrain.config import load_config
from posttrain.console import emit_benchmark
from posttrain.engine.builtin.engine import BuiltinEngine
from posttrain.engine.builtin.quantization import quantize_int8
from posttrain.evaluate.statistics import paired_bootstrap_ci
from posttrain.models.loading import load_model, load_tokenizer
from posttrain.pipeline.build import build_mixture
from posttrain.pipeline.evaluation import evaluate

ARMS = {  # name: (speculative, int8 weights)
    "standard": (False, False),
    "fast": (True, False),
    "fast_int8": (True, True),
}


class CountingEngine:
    """The engine, counting the completion tokens it returns."""

    def __init__(self, engine: BuiltinEngine) -> None:
        self.engine, self.tokens = engine, 0

    def generate(self, requests):
        completions = self.engine.generate(requests)
        self.tokens += sum(len(c.token_ids) for c in completions)
        return completions

    def __getattr__(self, name):
        return getattr(self.engine, name)


def run_arm(model_name: str, speculative: bool, int8: bool, tasks, config) -> dict:
    tokenizer = load_tokenizer(model_name)
    model = load_model(model_name)
    if int8:
        quantize_int8(model)
    engine = CountingEngine(BuiltinEngine(model, tokenizer, speculative=speculative))
    started = time.perf_counter()
    result = evaluate(
        engine,
        tokenizer,
        tasks,
        config.train.eval_max_new_tokens or config.rollout.max_new_tokens,
        config.rollout.system_prompt,
        batch_size=config.train.eval_batch_size,
    )
    wall = time.perf_counter() - started
    return {
        "accuracy": result.overall,
        "per_item": result.per_item,
        "eval_wall_s": round(wall, 2),
        "output_tokens": engine.tokens,
        "output_tok_s": round(engine.tokens / wall, 2),
        "load_average_1m": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=Path("examples/quickstart.toml"), help="Whose held-out set.")
    parser.add_argument("--out", type=Path, default=None, help="Also write the JSON here.")
    parser.add_argument("--bootstrap-samples", type=int, default=2000)
    parser.add_argument("--items", type=int, default=None, help="Only the first N held-out items (a smoke run).")
    args = parser.parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    config = load_config(args.config)
    tasks = build_mixture(config, args.config.parent).heldout()[: args.items]
    arms = {name: run_arm(config.model.name, *flags, tasks, config) for name, flags in ARMS.items()}
    ids = sorted(arms["standard"]["per_item"])
    before = [arms["standard"]["per_item"][i] for i in ids]
    delta, low, high = paired_bootstrap_ci(
        before, [arms["fast_int8"]["per_item"][i] for i in ids], samples=args.bootstrap_samples, seed=0
    )
    report = {
        "model": config.model.name,
        "eval": {"config": str(args.config), "items": len(ids)},
        "arms": {name: {k: v for k, v in arm.items() if k != "per_item"} for name, arm in arms.items()},
        "fast_lossless": arms["fast"]["per_item"] == arms["standard"]["per_item"],
        "int8_minus_standard": {"delta": round(delta, 4), "ci95": [round(low, 4), round(high, 4)]},
        "int8_no_loss": low >= 0.0,
        "tok_s_over_standard": {
            name: round(arm["output_tok_s"] / arms["standard"]["output_tok_s"], 3) for name, arm in arms.items()
        },
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
    }
    emit_benchmark(report, args.out)


if __name__ == "__main__":
    main()
