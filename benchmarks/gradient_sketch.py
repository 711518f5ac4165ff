"""Gradient conflict from count sketches against the exact cosines, on the real model.

Four "domains", each a batch of chat prompts of its own kind with random completions and
advantages (the gradient's structure, not its meaning, is what the sketch must preserve): each
domain's loss gradient (PolicyTrainer.loss_gradient), its count sketch at `--width`, and the
cosines between the domains from the full gradients and from the sketches, overall and per
module group. Then the cost at a hundred domains: sketches of `--domains` synthetic gradients
of the model's shape made from the real ones, and the time of their full cosine matrix.

    python benchmarks/gradient_sketch.py [--model smollm2-135m] [--width 8192] --out FILE.json

Prints JSON: "max_abs_error" (overall and per group, the worst pair), "sketch_s" (per domain),
"exact_bytes" and "sketch_bytes" per domain, "matrix_s" at `--domains` domains; goal: error at
most 0.05.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

import torch

from posttrain.config import AlgorithmConfig, OptimConfig
from posttrain.console import emit_benchmark
from posttrain.models.loading import load_model, load_tokenizer
from posttrain.models.token_ids import chat_prompt_ids
from posttrain.train.gradient_conflict import gradient_cosines
from posttrain.train.gradient_sketch import most_conflicting_pairs, sketch_cosines, sketch_gradient
from posttrain.train.samples import TrainSample
from posttrain.train.trainer import PolicyTrainer

DOMAINS = {
    "add": "What is {a} + {b}?",
    "words": "Spell the word number {a} backwards, then count its letters.",
    "code": "Write a bash command that prints line {a} of file{b}.txt.",
    "story": "Tell me in one sentence what happened on day {a} of {b}.",
}


def domain_batch(tokenizer, template: str, samples: int, completion_tokens: int, seed: int) -> list[TrainSample]:
    rng = random.Random(seed)
    batch = []
    for _ in range(samples):
        prompt = chat_prompt_ids(
            tokenizer, [{"role": "user", "content": template.format(a=rng.randrange(100), b=rng.randrange(100))}]
        )
        completion = [rng.randrange(100, tokenizer.vocab_size) for _ in range(completion_tokens)]
        batch.append(TrainSample(prompt, completion, [-1.0] * completion_tokens, rng.uniform(-1, 1)))
    return batch


def worst_error(exact: dict, sketched: dict) -> dict:
    overall = max(abs(sketched["overall"][p] - v) for p, v in exact["overall"].items())
    groups = max(abs(sketched["groups"][g][p] - v) for g, pairs in exact["groups"].items() for p, v in pairs.items())
    return {"overall": overall, "per_group": groups}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--width", type=int, default=8192)
    parser.add_argument("--samples", type=int, default=4, help="samples per domain")
    parser.add_argument("--completion-tokens", type=int, default=32)
    parser.add_argument("--domains", type=int, default=100, help="domains in the matrix-time measurement")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    tokenizer = load_tokenizer(args.model)
    model = load_model(args.model, "float32")
    trainer = PolicyTrainer(model, OptimConfig(micro_batch_tokens=4096), AlgorithmConfig(), 1.0, tokenizer.pad_token_id)
    gradients, sketches, sketch_s = {}, {}, []
    for seed, (name, template) in enumerate(DOMAINS.items()):
        gradients[name] = trainer.loss_gradient(
            domain_batch(tokenizer, template, args.samples, args.completion_tokens, seed)
        )
        started = time.perf_counter()
        sketches[name] = sketch_gradient(gradients[name], args.width)
        sketch_s.append(time.perf_counter() - started)
    exact, sketched = gradient_cosines(gradients), sketch_cosines(sketches)
    exact_bytes = sum(g.numel() * 4 for g in next(iter(gradients.values())).values())
    sketch_bytes = sum(s.numel() * 8 for s in next(iter(sketches.values())).values())

    # a hundred domains: mixtures of the four real sketches plus noise, the model's sketch shape
    generator = torch.Generator().manual_seed(0)
    names = sorted(sketches)
    many = {}
    for index in range(args.domains):
        weights = torch.randn(len(names), generator=generator)
        many[f"d{index:03d}"] = {
            group: sum(w * sketches[n][group] for w, n in zip(weights.tolist(), names)) for group in sketches[names[0]]
        }
    started = time.perf_counter()
    matrix = sketch_cosines(many)
    matrix_s = time.perf_counter() - started
    error = worst_error(exact, sketched)
    emit_benchmark(
        {
            "benchmark": "gradient_sketch",
            "model": args.model,
            "width": args.width,
            "domains_compared": names,
            "exact_overall": exact["overall"],
            "sketched_overall": sketched["overall"],
            "max_abs_error": error,
            "goal_max_abs_error": 0.05,
            "goal_met": error["overall"] <= 0.05 and error["per_group"] <= 0.05,
            "module_groups": len(exact["groups"]),
            "sketch_s": sketch_s,
            "exact_bytes_per_domain": exact_bytes,
            "sketch_bytes_per_domain": sketch_bytes,
            "matrix_domains": args.domains,
            "matrix_pairs": len(matrix["overall"]),
            "matrix_s": matrix_s,
            "most_conflicting_of_the_hundred": most_conflicting_pairs(matrix, 3),
        },
        args.out,
    )


if __name__ == "__main__":
    main()
