"""Does the builtin engine compute a model as `transformers` does? (`posttrain engine verify`)

Two checks on a fixed prompt set, both against code the engine does not share:

    greedy      the engine's greedy continuation of each prompt, token for token, against
                `transformers`' own `generate` on the same weights (its attention, its kernels)
    logprobs    the largest |engine logprob - trainer logprob| over every generated token, the
                trainer's side being the training forward (the model on the engine's kernels,
                one full-sequence pass, train/logprobs.py): 0.0 is zero train/inference mismatch

A model whose family the engine does not implement is refused before anything runs
(engine/builtin/model_families.py); the report then says `supported: false`.
"""

from __future__ import annotations

import copy

import torch
from transformers import AutoConfig

from posttrain.engine.builtin.model_families import UnsupportedModelError, check_supported
from posttrain.engine.interface import GenerationRequest, SamplingParams
from posttrain.models.loading import TINY_LLAMA, load_model, load_tokenizer, resolve_model_dir, tiny_llama_config
from posttrain.models.stop_tokens import stop_token_ids
from posttrain.models.token_ids import chat_prompt_ids, token_ids

PROMPTS = (
    "What is 17 + 25?",
    "Name three primary colors.",
    "Write a haiku about the sea.",
    "Explain photosynthesis in one sentence.",
    "Count from one to ten.",
    "Describe a sunrise " + "over the mountains, " * 12,
)


def model_config(spec: str):
    if spec == TINY_LLAMA:
        return tiny_llama_config()
    return AutoConfig.from_pretrained(resolve_model_dir(spec))


def prompt_ids(tokenizer, text: str) -> list[int]:
    if getattr(tokenizer, "chat_template", None):
        return chat_prompt_ids(tokenizer, [{"role": "user", "content": text}])
    return token_ids(tokenizer(text))


def transformers_greedy(model, prompt: list[int], max_tokens: int, eos: set[int]) -> list[int]:
    with torch.no_grad():
        out = model.generate(
            torch.tensor([prompt]),
            attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
            max_new_tokens=max_tokens,
            do_sample=False,
            eos_token_id=sorted(eos),
            pad_token_id=min(eos),
        )
    tokens = out[0, len(prompt) :].tolist()
    stop = next((i for i, t in enumerate(tokens) if t in eos), None)
    return tokens if stop is None else tokens[: stop + 1]


def verify_engine(spec: str, max_tokens: int = 16, progress=None) -> dict:
    """The report: model_type, supported, prompts, greedy_identical, greedy_mismatches (the
    indices of prompts whose continuations differ), logprob_mismatch_max, tokens compared."""
    config = model_config(spec)
    report = {"model": spec, "model_type": config.model_type}
    try:
        check_supported(config)  # before loading any weights
    except UnsupportedModelError as exc:
        return {
            **report,
            "supported": False,
            "prompts": 0,
            "greedy_identical": None,
            "logprob_mismatch_max": None,
            "error": str(exc),
        }
    report["supported"] = True
    model = load_model(spec, "float32")
    from posttrain.engine.builtin.engine import BuiltinEngine
    from posttrain.engine.builtin.engine_kernels import use_engine_kernels
    from posttrain.train.logprobs import pad_right, token_logprobs

    tokenizer = load_tokenizer(spec)
    prompts = [prompt_ids(tokenizer, text) for text in PROMPTS]
    engine = BuiltinEngine(copy.deepcopy(model), tokenizer, num_blocks=256, block_size=16)
    params = SamplingParams(temperature=0.0, max_tokens=max_tokens)
    completions = engine.generate([GenerationRequest(str(i), p, params) for i, p in enumerate(prompts)])
    if progress:
        progress("builtin engine done")
    stops = set(stop_token_ids(model, tokenizer))
    mismatches = []
    for index, (prompt, completion) in enumerate(zip(prompts, completions)):
        if transformers_greedy(model, prompt, max_tokens, stops) != completion.token_ids:
            mismatches.append(index)
    if progress:
        progress("transformers done")
    trainer = use_engine_kernels(copy.deepcopy(model))
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    ids, mask = pad_right([c.prompt_token_ids + c.token_ids for c in completions], pad)
    with torch.no_grad():
        recomputed, _ = token_logprobs(trainer, ids, mask)
    worst, compared = 0.0, 0
    for row, c in enumerate(completions):
        start = len(c.prompt_token_ids) - 1
        trainer_side = recomputed[row, start : start + len(c.token_ids)]
        engine_side = torch.tensor(c.logprobs, dtype=trainer_side.dtype)
        worst = max(worst, float((trainer_side - engine_side).abs().max()))
        compared += len(c.token_ids)
    return {
        **report,
        "prompts": len(prompts),
        "greedy_identical": not mismatches,
        "greedy_mismatches": mismatches,
        "logprob_mismatch_max": worst,
        "tokens_compared": compared,
        "row_invariance": engine.invariance.describe(),
        "concatenated_projections": engine.runner.qkv is not None,  # q/k/v and gate/up as one call each
    }
