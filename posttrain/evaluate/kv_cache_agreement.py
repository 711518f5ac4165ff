"""How far a lossy KV cache moves the builtin engine's output: greedy tokens and next-token
distributions of a candidate engine (e.g. the int8 cache) against a reference (the fp32 cache)
on the same prompts.

    greedy_agreement   share of generated positions where the two greedy tokens are equal
    kl                 KL(reference || candidate) of the next-token distributions, at the
                       positions up to and including the first disagreement (before it both
                       engines saw the same context, so the two distributions are comparable)
    first_divergence   the position of the first disagreement (the reply's length if none)
"""

from __future__ import annotations

import torch

from posttrain.engine.interface import GenerationRequest, SamplingParams


def greedy_with_logits(engine, prompt: list[int], max_tokens: int) -> tuple[list[int], torch.Tensor]:
    """A greedy reply of the builtin engine and the float32 logits each of its tokens came from
    ([tokens, vocab]), read off the model runner's output as the engine steps."""
    captured = []
    run = engine.runner.run

    def recording(chunks):
        logits = run(chunks)
        if len(logits):
            captured.append(logits)
        return logits

    engine.runner.run = recording
    try:
        completion = engine.generate(
            [GenerationRequest("kv-agreement", prompt, SamplingParams(temperature=0, max_tokens=max_tokens))]
        )[0]
    finally:
        del engine.runner.run  # the runner's own method again
    tokens = completion.token_ids
    return tokens, torch.cat(captured)[: len(tokens)]


def compare(reference, candidate, prompts: list[list[int]], max_tokens: int) -> dict:
    """Greedy agreement and KL of `candidate` against `reference` (two builtin engines over the
    same weights) on `prompts`, one at a time."""
    agree = positions = 0
    kls, firsts = [], []
    for prompt in prompts:
        ref_tokens, ref_logits = greedy_with_logits(reference, prompt, max_tokens)
        cand_tokens, cand_logits = greedy_with_logits(candidate, prompt, max_tokens)
        length = min(len(ref_tokens), len(cand_tokens))
        same = [a == b for a, b in zip(ref_tokens, cand_tokens)]
        agree += sum(same)
        positions += max(len(ref_tokens), len(cand_tokens))
        first = same.index(False) if False in same else length
        firsts.append(first)
        seen = min(first + 1, length)
        log_p = torch.log_softmax(ref_logits[:seen].double(), -1)
        log_q = torch.log_softmax(cand_logits[:seen].double(), -1)
        kls.extend((log_p.exp() * (log_p - log_q)).sum(-1).tolist())
    return {
        "prompts": len(prompts),
        "positions": positions,
        "greedy_agreement": agree / positions if positions else None,
        "kl_mean": sum(kls) / len(kls) if kls else None,
        "kl_max": max(kls) if kls else None,
        "kl_positions": len(kls),
        "first_divergence_mean": sum(firsts) / len(firsts) if firsts else None,
    }
