"""Checking a sequence's draft tokens against the target model: which to keep, and the next token.

The model scores the last known token and the k draft tokens in one pass, giving k + 1 rows of
logits: row i is the distribution of the token after draft i - 1. Verification draws each
position's token exactly as plain decoding would (the same distribution, and the next uniform
number of the sequence's own random stream) and keeps going while the token equals the draft:

    for i in 0..k:  t_i = sample(p_i, u_i);  stop unless i < k and t_i == d_i

For a deterministic drafter (a draft token has probability 1 under the draft) this is the
standard speculative-sampling rule (Leviathan et al. 2023, Chen et al. 2023): draft d_i is kept
with probability p_i(d_i), and at a rejection the token is distributed as p_i without d_i,
renormalised. So the output distribution is plain sampling's, and more: one uniform number is
used per appended token, as in plain decoding, so a seeded request gets the same tokens with or
without speculation. Greedy keeps drafts while they equal the argmax, then takes the argmax. A
token's logprob is read from its own row under the plain sampler's convention (temperature-
scaled log-softmax, before truncation), so the trainer recomputes the very same numbers.
"""

from __future__ import annotations

import torch

from posttrain.engine.builtin.sampler import invert_cdf, sampling_probs
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
        log_probs, probs = sampling_probs(logits, params)
        tokens = []
        for row in range(len(draft) + 1):
            uniform = torch.rand(1, generator=generator) if generator is not None else torch.rand(1)
            token = int(invert_cdf(probs[row : row + 1], uniform.to(probs.dtype))[0])
            tokens.append(token)
            if row == len(draft) or token != draft[row]:
                break
        log_probs = log_probs[: len(tokens)]
    chosen = log_probs.gather(-1, torch.tensor(tokens)[:, None]).squeeze(-1)
    return tokens, chosen.tolist()
