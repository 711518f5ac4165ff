"""The builtin engine with and without speculation on the same requests, in one process.

CPU seconds (one torch thread), steps and draft tokens of `generate` over the serve bench's chat
questions or agent turns, greedy, the two engines back to back `--pairs` times; the ratio is
plain CPU time / speculative CPU time (above 1: speculation is faster). CPU time rather than
wall time, because on a shared machine another process's load moves wall time far more.

`--arrivals closed` feeds the requests as serve bench's clients do: `--concurrency` in flight,
the next one added as soon as one finishes, so most steps mix new prompts' prefill with the
others' decoding (`batch`, the default, hands all requests to `generate` at once).

    OMP_NUM_THREADS=1 python benchmarks/speculation_ab.py --workload chat --requests 16 --concurrency 16
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from posttrain.engine.builtin.engine import BuiltinEngine
from posttrain.engine.interface import GenerationRequest, SamplingParams
from posttrain.models.loading import load_model, load_tokenizer
from posttrain.models.token_ids import chat_prompt_ids
from posttrain.serve.bench import AGENT_TURNS, CHAT_QUESTIONS


def workload(name: str, tokenizer) -> tuple[list[list[int]], int]:
    """(prompts, new tokens per request), as serve bench sends them."""
    if name == "agent":
        turns = [json.loads(line) for line in AGENT_TURNS.read_text().splitlines() if line.strip()]
        return [t["prompt_ids"] for t in turns], 48
    return [chat_prompt_ids(tokenizer, [{"role": "user", "content": q}]) for q in CHAT_QUESTIONS], 32


def closed_loop(engine: BuiltinEngine, batch: list[GenerationRequest], concurrency: int) -> list:
    """Generate with `concurrency` requests in flight, each finished one replaced by the next."""
    waiting, running, done = list(batch), [], {}
    while waiting or running:
        while waiting and len(running) < concurrency:
            running += engine.add_requests([waiting.pop(0)])
        engine.step()
        for seq in [s for s in running if s.is_finished]:
            running.remove(seq)
            done[seq.request_id] = engine.completion(seq)
    return [done[request.request_id] for request in batch]


def run(
    model, tokenizer, prompts, max_tokens: int, requests: int, concurrency: int, speculative: bool, arrivals: str
) -> dict:
    engine = BuiltinEngine(model, tokenizer, speculative=speculative, max_num_seqs=concurrency)
    greedy = SamplingParams(temperature=0, max_tokens=max_tokens)
    engine.generate([GenerationRequest("warm-up", prompts[0], SamplingParams(temperature=0, max_tokens=8))])
    batch = [GenerationRequest(str(i), prompts[i % len(prompts)], greedy) for i in range(requests)]
    started = time.process_time()
    completions = engine.generate(batch) if arrivals == "batch" else closed_loop(engine, batch, concurrency)
    return {
        "cpu_s": time.process_time() - started,
        "steps": engine.stats.steps,
        "draft_tokens": engine.stats.draft_tokens,
        "acceptance": engine.stats.acceptance_rate,
        "tokens": [c.token_ids for c in completions],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", choices=("chat", "agent"), default="chat")
    parser.add_argument("--requests", type=int, default=16)
    parser.add_argument("--concurrency", type=int, default=16, help="Sequences decoded together.")
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument(
        "--arrivals",
        choices=("batch", "closed"),
        default="batch",
        help="batch: all requests at once; closed: --concurrency in flight, as serve bench's clients.",
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    tokenizer, model = load_tokenizer("smollm2-135m"), load_model("smollm2-135m")
    prompts, max_tokens = workload(args.workload, tokenizer)
    for _ in range(args.pairs):
        plain, fast = (
            run(model, tokenizer, prompts, max_tokens, args.requests, args.concurrency, speculative, args.arrivals)
            for speculative in (False, True)
        )
        print(
            f"plain {plain['cpu_s']:.2f} s, {plain['steps']} steps; speculative {fast['cpu_s']:.2f} s, "
            f"{fast['steps']} steps, {fast['draft_tokens']} draft tokens, acceptance {fast['acceptance']:.2f}; "
            f"ratio {plain['cpu_s'] / fast['cpu_s']:.3f}; greedy identical {plain['tokens'] == fast['tokens']}",
            flush=True,
        )


if __name__ == "__main__":
    main()
