"""The int8 KV cache against the fp32 cache, in one process, on the same prompts.

    bytes_per_token   the KV cache's bytes for one token (all layers, keys and values, scales)
    fit               sequences of each context length that fit in the memory of --num-blocks
                      fp32 blocks, from the bytes the two engines allocate
    decode            greedy decode tok/s at each context length (wall clock and CPU seconds; the
                      prefill is not timed), fp32 and int8 alternating --repeats times, the best kept
    agreement         greedy token agreement and KL(fp32 || int8) on agent traces (the serve
                      bench's recorded agent turns) and long-context prompts (evaluate/longctx.py),
                      for int8 with the key rotation (the engine's default) and without it

    OMP_NUM_THREADS=1 python benchmarks/kv_int8.py                 # SmolLM2, 2k/4k/8k
    OMP_NUM_THREADS=1 python benchmarks/kv_int8.py --tiny          # tiny random model, a quick check

Writes benchmarks/results/kv_int8.json (--tiny: kv_int8_tiny.json; --out FILE) with a `cpu`
record, and prints the same JSON.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import sys
import time
from pathlib import Path

import torch

from posttrain import cpu
from posttrain.engine.builtin.engine import BuiltinEngine
from posttrain.engine.interface import GenerationRequest, SamplingParams
from posttrain.evaluate.kv_cache_agreement import compare
from posttrain.evaluate.longctx import generate_tasks
from posttrain.models.loading import load_model, load_tokenizer
from posttrain.models.token_ids import chat_prompt_ids
from posttrain.serve.bench import AGENT_TURNS

RESULTS = Path(__file__).parent / "results"
DTYPES = ("fp32", "int8")
TINY = {
    "model": "tiny-llama",
    "contexts": [256, 512, 1024],
    "decode_tokens": 32,
    "repeats": 2,
    "agent_prompts": 4,
    "longctx": "longctx:retrieval,multihop:1k:1",
    "max_tokens": 16,
}


def engine_for(model, tokenizer, dtype: str, num_blocks: int, rotate: bool = True, **kwargs) -> BuiltinEngine:
    engine = BuiltinEngine(model, tokenizer, num_blocks=num_blocks, kv_cache_dtype=dtype, **kwargs)
    if not rotate:
        engine.runner.key_rotation = None
    return engine


def bytes_and_fit(model, tokenizer, num_blocks: int, contexts: list[int], block_size: int = 16) -> dict:
    """Bytes a token as allocated, and the sequences of each length that fit in the fp32 cache's memory."""
    per_token = {}
    for dtype in DTYPES:
        runner = engine_for(model, tokenizer, dtype, 4).runner
        tensors = [runner.k_cache, runner.v_cache, *(runner.scales or ())]
        per_token[dtype] = sum(t.numel() * t.element_size() for t in tensors) // runner.k_cache.shape[2]
    budget = per_token["fp32"] * num_blocks * block_size
    blocks = {dtype: budget // (per_token[dtype] * block_size) for dtype in DTYPES}
    fit = {}
    for context in contexts:
        need = math.ceil(context / block_size)
        fit[str(context)] = {dtype: blocks[dtype] // need for dtype in DTYPES}
        fit[str(context)]["ratio"] = fit[str(context)]["int8"] / max(fit[str(context)]["fp32"], 1)
    return {
        "bytes_per_token": {**per_token, "ratio": per_token["int8"] / per_token["fp32"]},
        "fit": {"budget_bytes": budget, "blocks": blocks, "by_context": fit},
    }


def decode_speed(engine: BuiltinEngine, prompts: list[list[int]], new_tokens: int) -> dict:
    """Greedy tok/s over the decode steps after every sequence's first token (prefill untimed)."""
    engine.eos_token_ids = set()  # every sequence decodes all its tokens
    params = SamplingParams(temperature=0, max_tokens=new_tokens)
    seqs = engine.add_requests([GenerationRequest(f"d{i}", p, params) for i, p in enumerate(prompts)])
    while any(len(s) - s.num_prompt_tokens == 0 for s in seqs):
        engine.step()
    done = sum(len(s) - s.num_prompt_tokens for s in seqs)
    wall, process = time.perf_counter(), time.process_time()
    while any(not s.is_finished for s in seqs):
        engine.step()
    wall, process = time.perf_counter() - wall, time.process_time() - process
    tokens = sum(len(s) - s.num_prompt_tokens for s in seqs) - done
    return {"tokens": tokens, "wall_s": wall, "cpu_s": process, "tok_s": tokens / wall, "cpu_tok_s": tokens / process}


def decode_table(model, tokenizer, contexts, batch, new_tokens, repeats, seed=0) -> dict:
    generator = torch.Generator().manual_seed(seed)
    vocab = model.config.vocab_size
    table = {}
    for context in contexts:
        # each sequence ends at the context length: a prompt of context - new_tokens, then the reply
        length = context - new_tokens
        prompts = [torch.randint(100, vocab, (length,), generator=generator).tolist() for _ in range(batch)]
        blocks = batch * math.ceil(context / 16) + 4
        runs = {dtype: [] for dtype in DTYPES}
        for _ in range(repeats):
            for dtype in DTYPES:  # a fresh engine each run: no prefix hits, the same cold start
                engine = engine_for(model, tokenizer, dtype, blocks, max_num_seqs=batch)
                runs[dtype].append(decode_speed(engine, prompts, new_tokens))
                del engine
        best = {dtype: max(runs[dtype], key=lambda r: r["tok_s"]) for dtype in DTYPES}
        table[str(context)] = {**best, "int8_over_fp32": best["int8"]["tok_s"] / best["fp32"]["tok_s"], "runs": runs}
        fp32, int8 = best["fp32"]["tok_s"], best["int8"]["tok_s"]
        print(f"decode at {context}: fp32 {fp32:.1f} tok/s, int8 {int8:.1f} tok/s", file=sys.stderr)
    return table


def agreement(model, tokenizer, prompt_sets: dict, max_tokens: int) -> dict:
    longest = max(len(p) for prompts in prompt_sets.values() for p in prompts)
    blocks = math.ceil((longest + max_tokens) / 16) + 8
    fp32 = engine_for(model, tokenizer, "fp32", blocks)
    result = {}
    for name, prompts in prompt_sets.items():
        result[name] = {"prompt_tokens_mean": sum(map(len, prompts)) / len(prompts)}
        for arm, rotate in (("int8", True), ("int8_no_rotation", False)):
            candidate = engine_for(model, tokenizer, "int8", blocks, rotate=rotate)
            result[name][arm] = compare(fp32, candidate, prompts, max_tokens)
            del candidate
            print(f"{name} {arm}: {json.dumps(result[name][arm])}", file=sys.stderr)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="tiny random model, short contexts: a quick check")
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--contexts", type=int, nargs="+", default=[2048, 4096, 8192])
    parser.add_argument("--batch", type=int, default=1, help="sequences decoded together in the tok/s runs")
    parser.add_argument("--decode-tokens", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--num-blocks", type=int, default=2048, help="the fp32 cache whose memory both get")
    parser.add_argument("--agent-prompts", type=int, default=8)
    parser.add_argument("--longctx", default="longctx:all:1k,4k:1", help="long-context prompts (evaluate/longctx.py)")
    parser.add_argument("--max-tokens", type=int, default=48, help="greedy tokens per prompt for agreement")
    parser.add_argument("--out", "--output", dest="output", type=Path)
    if parser.parse_known_args()[0].tiny:  # its own defaults; flags given still win
        parser.set_defaults(**TINY)
    args = parser.parse_args()
    output = args.output or RESULTS / ("kv_int8_tiny.json" if args.tiny else "kv_int8.json")
    torch.manual_seed(0)
    tokenizer = load_tokenizer(args.model)
    model = load_model(args.model, seed=0) if args.model == "tiny-llama" else load_model(args.model)
    started = time.perf_counter()
    turns = [json.loads(line) for line in AGENT_TURNS.read_text().splitlines() if line.strip()]
    prompt_sets = {
        "agent_traces": [t["prompt_ids"] for t in turns[: args.agent_prompts]],
        "long_context": [
            chat_prompt_ids(tokenizer, [{"role": "user", "content": task.instruction}])
            for task in generate_tasks(args.longctx, tokenizer)
        ],
    }
    record = {
        "benchmark": "kv_int8",
        "model": args.model,
        "tiny": args.tiny,
        "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "cpu": cpu.describe(),
        "torch_threads": torch.get_num_threads(),
        **bytes_and_fit(model, tokenizer, args.num_blocks, args.contexts),
        "decode": decode_table(model, tokenizer, args.contexts, args.batch, args.decode_tokens, args.repeats),
        "agreement": agreement(model, tokenizer, prompt_sets, args.max_tokens),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    record["seconds"] = time.perf_counter() - started
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {output}", file=sys.stderr)
    print(json.dumps(record, indent=2))


if __name__ == "__main__":
    main()
