"""Checking a sequence's draft tokens against the target model: which to keep, and the next token.

The model scores the last known token and the k draft tokens in one pass, giving k + 1 rows of
logits: row i is the distribution of the token after draft i - 1. The drafters are
deterministic (a draft token has probability 1 under the draft), so the standard
speculative-sampling rule (Leviathan et al. 2023, Chen et al. 2023) reads:

    accept draft i with probability p_i(d_i)
    at the first rejection, draw from p_i with d_i removed, renormalised; stop
    if every draft is accepted, draw one more token from p_k

which yields exactly the distribution of drawing every token from p one at a time. Greedy
(temperature 0) keeps drafts while they equal the argmax and then takes the argmax: the same
tokens as plain greedy decoding. A token's logprob is read from its own row under the plain
sampler's convention (temperature-scaled log-softmax, before truncation), so the trainer
recomputes the very same numbers.
"""

from __future__ import annotations

import torch

from posttrain.engine.builtin.sampler import invert_cdf, truncated_probs
from posttrain.engine.interface import SamplingParams


def verify_draft(
    logits: torch.Tensor, draft: list[int], params: SamplingParams, generator: torch.Generator | None
) -> tuple[list[int], list[float]]:
    """logits: float32 [len(draft) + 1, vocab]. Returns the tokens to append (the accepted
    drafts and one more) and their logprobs."""
    temperature = params.temperature
    if temperature == 0:
        targets = logits.argmax(dim=-1).tolist()
        accepted = 0
        while accepted < len(draft) and draft[accepted] == targets[accepted]:
            accepted += 1
        tokens = draft[:accepted] + [targets[accepted]]
        log_probs = torch.log_softmax(logits[: accepted + 1], dim=-1)
    else:
        probs = truncated_probs(logits, params)
        uniform = torch.rand(len(draft) + 1, generator=generator).tolist()
        tokens = []
        for row, token in enumerate(draft):
            if uniform[row] < probs[row, token].item():
                tokens.append(token)
                continue
            residual = probs[row].clone()
            residual[token] = 0.0
            tokens.append(_draw(residual, generator))
            break
        else:
            tokens.append(_draw(probs[len(draft)], generator))
        scaled = logits[: len(tokens)] / temperature if temperature != 1.0 else logits[: len(tokens)]
        log_probs = torch.log_softmax(scaled, dim=-1)
    chosen = log_probs.gather(-1, torch.tensor(tokens)[:, None]).squeeze(-1)
    return tokens, chosen.tolist()


def _draw(probs: torch.Tensor, generator: torch.Generator | None) -> int:
    uniform = torch.rand(1, generator=generator).to(probs.dtype)
    return int(invert_cdf(probs[None], uniform)[0])
