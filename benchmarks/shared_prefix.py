"""The trainer step with and without shared-prefix training, on agent-episode-shaped samples.

One group of `--group-size` episodes of one task: the agent's system prompt and an instruction
(the shared prompt, 370 tokens with SmolLM2's tokenizer), then a completion of 2-3 replies with
masked tool observations between them. Two trainers on copies of the same model (the engine's
kernels, fp32) take steps on the same samples, `[optim] shared_prefix` on and off, alternating
which goes first each round.

    python benchmarks/shared_prefix.py [--group-size 8] [--completion-tokens 40,150] --out FILE.json

Prints JSON: {"shared_step_s", "full_step_s", "speedup", "prefix_tokens_shared", "train_tokens",
"logprobs_identical", ...}: step times are medians over the measured rounds.
"""

from __future__ import annotations

import argparse
import copy
import random
import statistics
import sys
import time
from pathlib import Path

import torch

from posttrain.agent.loop import system_prompt
from posttrain.config import AlgorithmConfig, OptimConfig
from posttrain.console import emit_benchmark
from posttrain.engine.builtin.engine_kernels import use_engine_kernels
from posttrain.models.loading import load_model, load_tokenizer
from posttrain.models.token_ids import chat_prompt_ids
from posttrain.train.logprobs import pad_right, token_logprobs
from posttrain.train.samples import TrainSample
from posttrain.train.trainer import PolicyTrainer

INSTRUCTION = (
    "The test suite in /app fails: parse_date in /app/dates.py reads ISO dates (YYYY-MM-DD) with the "
    "day and month swapped, and format_range in /app/ranges.py drops the last day of a range. Fix both "
    "functions without changing their signatures, keep the existing behaviour for the other formats, "
    "then run the tests with `pytest -q /app/tests` and make sure every test passes before you finish."
)


def token_range(text: str) -> tuple[int, int]:
    low, high = (int(n) for n in text.split(","))
    if not 1 <= low <= high:
        raise argparse.ArgumentTypeError(f"{text!r}: want LOW,HIGH with 1 <= LOW <= HIGH")
    return low, high


def episode_samples(
    prompt: list[int], group_size: int, completion_tokens: tuple[int, int], vocab: int, seed: int
) -> list[TrainSample]:
    """`group_size` episodes of one prompt: each completion (its length drawn from
    `completion_tokens`) is 2-3 replies with tool observations between them, the observations
    a third of a reply's length and masked out. Token ids are random: the step's cost depends
    on the shapes only."""
    rng = random.Random(seed)
    samples = []
    for index in range(group_size):
        length, turns = rng.randint(*completion_tokens), rng.randint(2, 3)
        observation = max(1, length // (4 * turns - 1))  # each reply about three times an observation
        mask: list[int] = []
        for turn in range(turns):
            if turn:
                mask += [0] * observation
            reply = (length - len(mask)) // (turns - turn)
            mask += [1] * reply
        ids = [rng.randrange(3, vocab) for _ in mask]
        logprobs = [-rng.random() * 3 * m for m in mask]
        samples.append(TrainSample(prompt, ids, logprobs, (index % 2) * 2.0 - 1.0, mask))
    return samples


def logprobs_identical(model: torch.nn.Module, samples: list[TrainSample], pad_id: int) -> bool:
    """Whether the trainer's recomputed logprobs are the same bits with the prompt run once."""
    ids, mask = pad_right([s.prompt_ids + s.completion_ids for s in samples], pad_id)
    first = len(samples[0].prompt_ids) - 1
    with torch.no_grad():
        full, _ = token_logprobs(model, ids, mask, first_position=first)
        shared, _ = token_logprobs(model, ids, mask, first_position=first, prefix_length=first)
    valid = mask[:, 1:].bool()
    return torch.equal(full[valid], shared[valid])


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--completion-tokens", type=token_range, default=(40, 150), help="LOW,HIGH per episode")
    parser.add_argument("--rounds", type=int, default=5, help="measured rounds, alternating (default 5)")
    parser.add_argument("--warmup", type=int, default=1, help="unmeasured rounds first (default 1)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.group_size < 2 or args.rounds < 1 or args.warmup < 0:
        parser.error("--group-size needs >= 2, --rounds >= 1, --warmup >= 0")
    torch.set_num_threads(args.threads)
    tokenizer = load_tokenizer(args.model)
    model = use_engine_kernels(load_model(args.model, seed=args.seed))
    messages = [{"role": "system", "content": system_prompt()}, {"role": "user", "content": INSTRUCTION}]
    prompt = chat_prompt_ids(tokenizer, messages)
    samples = episode_samples(prompt, args.group_size, args.completion_tokens, model.config.vocab_size, args.seed)
    trainers = {
        side: PolicyTrainer(
            copy.deepcopy(model),
            OptimConfig(lr=1e-6, micro_batch_tokens=16384, shared_prefix=side == "shared"),
            AlgorithmConfig(),
            temperature=1.0,
            pad_id=tokenizer.pad_token_id,
        )
        for side in ("shared", "full")
    }
    times: dict[str, list[float]] = {side: [] for side in trainers}
    stats: dict[str, dict] = {}
    for round_index in range(args.warmup + args.rounds):
        order = list(trainers) if round_index % 2 == 0 else list(reversed(trainers))
        took = {}
        for side in order:
            started = time.perf_counter()
            stats[side] = trainers[side].step(samples)
            took[side] = time.perf_counter() - started
        if round_index >= args.warmup:
            for side, seconds in took.items():
                times[side].append(seconds)
        print(f"round {round_index}: " + ", ".join(f"{s} {t:.2f} s" for s, t in took.items()), file=sys.stderr)
    shared_s, full_s = statistics.median(times["shared"]), statistics.median(times["full"])
    result = {
        "model": args.model,
        "threads": args.threads,
        "group_size": args.group_size,
        "prompt_tokens": len(prompt),
        "completion_tokens": [len(s.completion_ids) for s in samples],
        "trained_tokens": sum(s.trained_tokens for s in samples),
        "train_tokens": stats["full"]["train_tokens"],
        "prefix_tokens_shared": stats["shared"]["prefix_tokens_shared"],
        "shared_step_s": shared_s,
        "full_step_s": full_s,
        "speedup": full_s / shared_s,
        "shared_step_s_measured": times["shared"],
        "full_step_s_measured": times["full"],
        "logprobs_identical": logprobs_identical(model, samples, tokenizer.pad_token_id),
        "torch": torch.__version__,
    }
    emit_benchmark(result, args.out)
    return result


if __name__ == "__main__":
    main()
