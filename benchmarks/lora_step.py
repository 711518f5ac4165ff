"""The trainer step with and without LoRA: step time and trainer memory, side by side.

The workload is a quickstart-shaped GRPO batch: `--prompts` chat prompts x `--group-size`
completions of `--completion-tokens` tokens (random ids: the cost depends on the shapes only),
one PolicyTrainer step on the engine's kernels (fp32). Each variant (full fine-tuning, LoRA with
`--rank` adapters on the attention projections) runs in its own process, so that its peak
resident memory is its own; the variants alternate for `--rounds` rounds and each process
takes `--warmup` unmeasured steps first.

    python benchmarks/lora_step.py [--model smollm2-135m] [--rounds 2] --out FILE.json

Prints JSON: per variant "step_s" (median over every measured step), "peak_rss_mb" (the
largest of its processes), "trainer_state_mb" (parameters + gradients + AdamW state, counted
from the tensors after a step), "trainable_params"; and "lora_over_full" ratios.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

from posttrain.config import AlgorithmConfig, LoraConfig, OptimConfig
from posttrain.console import emit_benchmark
from posttrain.engine.builtin.engine_kernels import use_engine_kernels
from posttrain.models.loading import load_model, load_tokenizer
from posttrain.models.token_ids import chat_prompt_ids
from posttrain.train.lora import trainable_parameter_count, with_lora
from posttrain.train.samples import TrainSample
from posttrain.train.trainer import PolicyTrainer

VARIANTS = ("full", "lora")
QUESTIONS = ["What is 17 + 25?", "What is 3 + 4 + 8?", "What is 61 + 9?", "What is 5 + 5 + 2?"]


def batch(tokenizer, prompts: int, group_size: int, completion_tokens: int, seed: int) -> list[TrainSample]:
    rng = random.Random(seed)
    samples = []
    for index in range(prompts):
        question = QUESTIONS[index % len(QUESTIONS)] + " Reply with only the number."
        prompt = chat_prompt_ids(tokenizer, [{"role": "user", "content": question}])
        for _ in range(group_size):
            completion = [rng.randrange(100, tokenizer.vocab_size) for _ in range(completion_tokens)]
            samples.append(TrainSample(prompt, completion, [-1.0] * completion_tokens, rng.uniform(-1, 1)))
    return samples


def trainer_state_bytes(trainer: PolicyTrainer) -> int:
    """Parameters, their gradients and the optimizer's state, as tensors hold them."""
    total = sum(p.numel() * p.element_size() for p in trainer.model.parameters())
    total += sum(p.grad.numel() * p.grad.element_size() for p in trainer.model.parameters() if p.grad is not None)
    for state in trainer.optimizer.state.values():
        total += sum(t.numel() * t.element_size() for t in state.values() if torch.is_tensor(t))
    return total


def run_variant(args) -> dict:
    """One process, one variant: warm-up steps, then measured ones."""
    torch.set_num_threads(args.threads)
    tokenizer = load_tokenizer(args.model)
    model = use_engine_kernels(load_model(args.model, "float32"))
    if args.variant == "lora":
        model = with_lora(model, LoraConfig(r=args.rank, alpha=2 * args.rank), args.model)
    optim = OptimConfig(lr=1e-5, micro_batch_tokens=args.micro_batch_tokens)
    trainer = PolicyTrainer(model, optim, AlgorithmConfig(), 1.0, tokenizer.pad_token_id)
    samples = batch(tokenizer, args.prompts, args.group_size, args.completion_tokens, seed=0)
    times = []
    for step in range(args.warmup + args.steps):
        started = time.perf_counter()
        trainer.step(samples)
        if step >= args.warmup:
            times.append(time.perf_counter() - started)
    trainable, total = trainable_parameter_count(model)
    return {
        "step_s": times,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "trainer_state_mb": trainer_state_bytes(trainer) / 2**20,
        "trainable_params": trainable,
        "params": total,
        "train_tokens": sum(s.length for s in samples),
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--prompts", type=int, default=4)
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--completion-tokens", type=int, default=32)
    parser.add_argument("--micro-batch-tokens", type=int, default=2048)
    parser.add_argument("--rank", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=2, help="Processes per variant, alternating.")
    parser.add_argument("--steps", type=int, default=2, help="Measured steps per process.")
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--variant", choices=VARIANTS, help=argparse.SUPPRESS)  # set in the child processes
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.variant:
        print(json.dumps(run_variant(args)))
        return {}
    child_args = list(argv if argv is not None else sys.argv[1:])
    if "--out" in child_args:
        at = child_args.index("--out")
        del child_args[at : at + 2]
    runs: dict[str, list[dict]] = {v: [] for v in VARIANTS}
    for round_index in range(args.rounds):
        for variant in VARIANTS if round_index % 2 == 0 else reversed(VARIANTS):
            print(f"round {round_index + 1}/{args.rounds}: {variant}", file=sys.stderr)
            proc = subprocess.run(
                [sys.executable, __file__, *child_args, "--variant", variant],
                capture_output=True,
                text=True,
                check=True,
            )
            runs[variant].append(json.loads(proc.stdout.strip().splitlines()[-1]))
    result: dict = {
        "model": args.model,
        "workload": {
            "prompts": args.prompts,
            "group_size": args.group_size,
            "completion_tokens": args.completion_tokens,
            "train_tokens": runs["full"][0]["train_tokens"],
            "lora_rank": args.rank,
            "lora_targets": LoraConfig().target_modules,
        },
        "threads": args.threads,
        "rounds": args.rounds,
    }
    for variant, results in runs.items():
        result[variant] = {
            "step_s": statistics.median(t for r in results for t in r["step_s"]),
            "step_s_all": [round(t, 3) for r in results for t in r["step_s"]],
            "peak_rss_mb": max(r["peak_rss_mb"] for r in results),
            "trainer_state_mb": results[0]["trainer_state_mb"],
            "trainable_params": results[0]["trainable_params"],
            "params": results[0]["params"],
        }
    result["lora_over_full"] = {
        key: result["lora"][key] / result["full"][key] for key in ("step_s", "peak_rss_mb", "trainer_state_mb")
    }
    emit_benchmark(result, args.out)
    return result


if __name__ == "__main__":
    main()
