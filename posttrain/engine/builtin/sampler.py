"""Next-token choice and its logprob.

The logprob reported is log_softmax(logits / temperature) at the chosen token, before top-k/top-p
truncation (log_softmax(logits) for greedy): the distribution the trainer recomputes.
"""

from __future__ import annotations

import torch

from posttrain.engine.interface import SamplingParams


def sample(logits: torch.Tensor, params: list[SamplingParams], generators: list[torch.Generator | None]
           ) -> tuple[list[int], list[float]]:
    """logits: float32 [N, vocab], one row per sequence."""
    tokens, logprobs = [], []
    greedy_rows = [i for i, p in enumerate(params) if p.temperature == 0]
    if greedy_rows:
        rows = logits[greedy_rows]
        chosen = rows.argmax(dim=-1)
        lp = torch.log_softmax(rows, dim=-1).gather(-1, chosen[:, None]).squeeze(-1)
        greedy = dict(zip(greedy_rows, zip(chosen.tolist(), lp.tolist())))
    for i, p in enumerate(params):
        if p.temperature == 0:
            token, lp = greedy[i]
        else:
            scaled = logits[i] / p.temperature
            log_probs = torch.log_softmax(scaled, dim=-1)
            filtered = _truncate(scaled, p.top_k, p.top_p)
            probs = torch.softmax(filtered, dim=-1)
            token = int(torch.multinomial(probs, 1, generator=generators[i]))
            lp = float(log_probs[token])
        tokens.append(token)
        logprobs.append(lp)
    return tokens, logprobs


def _truncate(scaled: torch.Tensor, top_k: int, top_p: float) -> torch.Tensor:
    if top_k and top_k < scaled.shape[-1]:
        kth = torch.topk(scaled, top_k).values[-1]
        scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    if top_p < 1.0:
        sorted_logits, order = torch.sort(scaled, descending=True)
        cumulative = torch.softmax(sorted_logits, dim=-1).cumsum(-1)
        remove = cumulative - torch.softmax(sorted_logits, dim=-1) >= top_p  # keep the token that crosses p
        scaled = scaled.clone()
        scaled[order[remove]] = float("-inf")
    return scaled
