"""One trainer step on one long agent episode: peak resident memory and step time by length,
with and without activation checkpointing and the LM head in chunks.

The episode is agent-shaped: the agent's system prompt and an instruction, then turns of 64
model tokens and 128 observation tokens (masked) up to `--lengths` tokens in all (random ids:
the cost depends on the shapes only). One PolicyTrainer step (GRPO, fp32, the engine's kernels,
as `posttrain train` runs it) on SmolLM2-135M. Every (length, variant) runs in a fresh process,
so each peak is its own; the parent watches each child's resident set and stops one that
passes `--cap-gb` (recorded as such, with the resident set it had reached), so a variant that
cannot fit is measured as not fitting instead of taking the machine down. In each child, after
the step: the resident set, then again after glibc's malloc_trim (resident_memory.py), which
the trainer otherwise does itself after every step.

    OMP_NUM_THREADS=1 python benchmarks/long_episode_memory.py [--lengths 1024 2048 4096 8192] --out FILE.json

Prints JSON: per length and variant "peak_rss_mb", "step_s", "rss_after_step_mb",
"rss_after_trim_mb", "trim_s", or "exceeded_cap_gb" / "failed".
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

VARIANTS = {  # name: (activation_checkpointing, logprob_chunk_tokens)
    "checkpointing+chunked": (True, 1024),
    "checkpointing": (True, 0),
    "chunked": (False, 1024),
    "plain": (False, 0),
}
MODEL_TOKENS, OBSERVATION_TOKENS = 64, 128


def episode(tokenizer, length: int, seed: int = 0):
    from posttrain.agent.loop import system_prompt
    from posttrain.models.token_ids import chat_prompt_ids
    from posttrain.train.samples import TrainSample

    instruction = "The tests in /app fail: parse_date in /app/dates.py swaps day and month. Fix it."
    prompt = chat_prompt_ids(
        tokenizer, [{"role": "system", "content": system_prompt()}, {"role": "user", "content": instruction}]
    )
    rng = random.Random(seed)
    n = length - len(prompt)
    completion = [rng.randrange(100, tokenizer.vocab_size) for _ in range(n)]
    period = MODEL_TOKENS + OBSERVATION_TOKENS
    mask = [1 if i % period < MODEL_TOKENS else 0 for i in range(n)]
    return TrainSample(prompt, completion, [-1.0] * n, 1.0, mask)


def run_child(args) -> dict:
    import torch

    from posttrain.config import AlgorithmConfig, OptimConfig
    from posttrain.engine.builtin.engine_kernels import use_engine_kernels
    from posttrain.models.loading import load_model, load_tokenizer
    from posttrain.observe.resident_memory import current_rss_mb, release_freed_heap
    from posttrain.train.trainer import PolicyTrainer

    torch.set_num_threads(args.threads)
    checkpointing, chunk = VARIANTS[args.variant]
    tokenizer = load_tokenizer(args.model)
    model = use_engine_kernels(load_model(args.model, "float32"))
    optim = OptimConfig(
        lr=1e-6,
        micro_batch_tokens=max(args.length, 16),
        activation_checkpointing=checkpointing,
        logprob_chunk_tokens=chunk,
    )
    trainer = PolicyTrainer(model, optim, AlgorithmConfig(), 1.0, tokenizer.pad_token_id)
    trainer.trim_heap = False  # measured here: the resident set before and after
    sample = episode(tokenizer, args.length)
    loaded = current_rss_mb()
    started = time.perf_counter()
    stats = trainer.step([sample])
    step_s = time.perf_counter() - started
    after_step = current_rss_mb()
    started = time.perf_counter()
    release_freed_heap()
    trim_s = time.perf_counter() - started
    return {
        "tokens": sample.length,
        "step_s": round(step_s, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "rss_loaded_mb": round(loaded),
        "rss_after_step_mb": round(after_step),
        "rss_after_trim_mb": round(current_rss_mb()),
        "trim_s": round(trim_s, 3),
        "loss": stats["loss"],
        "grad_norm": stats["grad_norm"],
    }


def _resident_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, IndexError, ValueError):
        return 0.0


def measure(args, length: int, variant: str) -> dict:
    """One child process; stopped once its resident set passes the cap."""
    command = [sys.executable, __file__, "--model", args.model, "--threads", str(args.threads)]
    command += ["--child-length", str(length), "--variant", variant]
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    largest = 0.0
    while child.poll() is None:
        largest = max(largest, _resident_mb(child.pid))
        if largest > args.cap_gb * 1024 or time.perf_counter() - started > args.timeout_s:
            child.kill()
            child.wait()
            over = largest > args.cap_gb * 1024
            return {
                "tokens": length,
                ("exceeded_cap_gb" if over else "exceeded_timeout_s"): args.cap_gb if over else args.timeout_s,
                "rss_reached_mb": round(largest),
                "after_s": round(time.perf_counter() - started, 1),
            }
        time.sleep(0.2)
    out, err = child.communicate()
    if child.returncode != 0:
        return {"tokens": length, "failed": err.strip().splitlines()[-1:] or [f"exit {child.returncode}"]}
    return json.loads(out.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--lengths", type=int, nargs="+", default=[1024, 2048, 4096, 8192])
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--cap-gb", type=float, default=12.0, help="Stop a child whose resident set passes this.")
    parser.add_argument("--timeout-s", type=float, default=900.0, help="Stop a child that runs longer.")
    parser.add_argument("--child-length", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--variant", choices=list(VARIANTS), help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.child_length:
        args.length = args.child_length
        print(json.dumps(run_child(args)))
        return {}
    from posttrain.console import emit_benchmark

    results: dict[str, dict[str, dict]] = {}
    stopped: set[str] = set()  # a variant past the cap at one length is past it at every longer one
    for length in sorted(args.lengths):
        results[str(length)] = {}
        for variant in args.variants:
            if variant in stopped:
                results[str(length)][variant] = {"tokens": length, "not_run": "exceeded the cap at a shorter length"}
                continue
            print(f"{length} tokens: {variant}", file=sys.stderr)
            result = measure(args, length, variant)
            if "exceeded_cap_gb" in result or "exceeded_timeout_s" in result:
                stopped.add(variant)
            results[str(length)][variant] = result
            print(f"  {json.dumps(result)}", file=sys.stderr)
    report = {
        "model": args.model,
        "workload": {
            "episode": f"agent system prompt + instruction, then turns of {MODEL_TOKENS} model and "
            f"{OBSERVATION_TOKENS} observation (masked) tokens",
            "step": "one PolicyTrainer step, GRPO PPO-clip, fp32, the engine's kernels, one micro-batch",
            "variants": {
                name: {"activation_checkpointing": c, "logprob_chunk_tokens": k} for name, (c, k) in VARIANTS.items()
            },
        },
        "threads": args.threads,
        "cap_gb": args.cap_gb,
        "results": results,
    }
    emit_benchmark(report, args.out)
    return report


if __name__ == "__main__":
    main()
