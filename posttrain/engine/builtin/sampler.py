"""Next-token choice and its logprob, for a whole batch at once.

The logprob reported is log_softmax(logits / temperature) at the chosen token, before top-k/top-p
truncation (log_softmax(logits) for greedy): the distribution the trainer recomputes. Sampling
inverts the CDF: token = the first index whose cumulative probability exceeds u, u ~ U[0, 1)
drawn from the sequence's own seeded generator. One uniform number per row instead of one per
vocabulary entry (Gumbel-max) keeps sampling cheap next to the forward pass, and a sequence's
draws do not depend on which other sequences share its batch. The inversion goes in two levels
(which block of CDF_BLOCK tokens, then which token in it): a cumulative sum over the whole
vocabulary is a sequential pass that costs as much as the softmax itself.
"""

from __future__ import annotations

import torch

from posttrain.engine.interface import SamplingParams


def sample(
    logits: torch.Tensor, params: list[SamplingParams], generators: list[torch.Generator | None]
) -> tuple[list[int], list[float]]:
    """logits: float32 [N, vocab], one row per sequence."""
    temperatures = [p.temperature for p in params]
    greedy_rows = [i for i, t in enumerate(temperatures) if t == 0]
    sampled_rows = [i for i, t in enumerate(temperatures) if t != 0]
    if all(t in (0.0, 1.0) for t in temperatures):
        scaled = logits  # x / 1 is x exactly: skip a pass over [N, vocab]
    else:
        divisors = torch.tensor([t if t != 0 else 1.0 for t in temperatures], dtype=logits.dtype)
        scaled = logits / divisors[:, None]
    log_probs = torch.log_softmax(scaled, dim=-1)
    chosen = torch.empty(len(params), dtype=torch.long)
    if greedy_rows:
        index = torch.tensor(greedy_rows)
        chosen[index] = logits[index].argmax(dim=-1)
    if sampled_rows:
        every = len(sampled_rows) == len(params)
        index = torch.tensor(sampled_rows)
        untruncated = scaled if every else scaled[index]
        rows = _top_p(
            _top_k(untruncated, [params[i].top_k for i in sampled_rows]), [params[i].top_p for i in sampled_rows]
        )
        if rows is untruncated:
            probs = (log_probs if every else log_probs[index]).exp()
        else:
            probs = torch.softmax(rows, dim=-1)
        uniform = torch.cat(
            [
                torch.rand(1, generator=generators[i]) if generators[i] is not None else torch.rand(1)
                for i in sampled_rows
            ]
        ).to(probs.dtype)
        chosen[index] = invert_cdf(probs, uniform)
    chosen_logprobs = log_probs.gather(-1, chosen[:, None]).squeeze(-1)
    return chosen.tolist(), chosen_logprobs.tolist()


def top_logprobs(logits: torch.Tensor, temperature: float, k: int) -> list[list[tuple[int, float]]]:
    """The k most likely tokens of each row [N, vocab] and their logprobs, under the same
    convention as a chosen token's (temperature-scaled, before truncation)."""
    scaled = logits / temperature if temperature not in (0.0, 1.0) else logits
    values, indices = torch.log_softmax(scaled, dim=-1).topk(k, dim=-1)
    return [list(zip(row_ids, row_values)) for row_ids, row_values in zip(indices.tolist(), values.tolist())]


def sampling_probs(logits: torch.Tensor, params: SamplingParams) -> tuple[torch.Tensor, torch.Tensor]:
    """(log_probs, probs) of rows [N, vocab] sampled under one `params` (temperature > 0), with
    the very arithmetic `sample` uses: logprobs before truncation, probs after top-k/top-p."""
    scaled = logits / params.temperature if params.temperature != 1.0 else logits
    log_probs = torch.log_softmax(scaled, dim=-1)
    rows = _top_p(_top_k(scaled, [params.top_k] * len(scaled)), [params.top_p] * len(scaled))
    probs = log_probs.exp() if rows is scaled else torch.softmax(rows, dim=-1)
    return log_probs, probs


CDF_BLOCK = 1024


def invert_cdf(probs: torch.Tensor, uniform: torch.Tensor) -> torch.Tensor:
    """For each row of probs [N, V] (non-negative, any positive total), the first index whose
    cumulative mass exceeds uniform * total, uniform [N] in [0, 1). Never a zero-mass index."""
    rows, vocab = probs.shape
    padding = -vocab % CDF_BLOCK
    blocks = torch.nn.functional.pad(probs, (0, padding)) if padding else probs
    blocks = blocks.view(rows, -1, CDF_BLOCK)
    block_cdf = blocks.sum(dim=-1).cumsum(dim=-1)  # [N, blocks]
    # u scaled by the row's own total absorbs the sums' rounding; right=True never lands on a
    # zero-mass block or token (its cdf equals its predecessor's)
    total = block_cdf[:, -1]
    target = torch.minimum(uniform * total, torch.nextafter(total, torch.zeros_like(total)))
    block = torch.searchsorted(block_cdf, target[:, None], right=True).squeeze(-1).clamp_(max=block_cdf.shape[1] - 1)
    before = torch.where(
        block > 0, block_cdf.gather(-1, (block - 1).clamp(min=0)[:, None]).squeeze(-1), torch.zeros_like(target)
    )
    inner_cdf = blocks[torch.arange(rows), block].cumsum(dim=-1)  # [N, CDF_BLOCK]
    # the block's own cumsum may total a rounding less than its sum: stay below its last value
    inner_target = torch.minimum(target - before, torch.nextafter(inner_cdf[:, -1], torch.zeros_like(target)))
    token = torch.searchsorted(inner_cdf, inner_target.clamp(min=0)[:, None], right=True).squeeze(-1)
    return (block * CDF_BLOCK + token.clamp_(max=CDF_BLOCK - 1)).clamp_(max=vocab - 1)


def _top_k(rows: torch.Tensor, ks: list[int]) -> torch.Tensor:
    if not any(0 < k < rows.shape[-1] for k in ks):
        return rows
    largest = max(ks)
    top = torch.topk(rows, min(largest, rows.shape[-1]), dim=-1).values
    kth = torch.stack(
        [top[i, k - 1] if 0 < k < rows.shape[-1] else rows.new_tensor(float("-inf")) for i, k in enumerate(ks)]
    )
    return rows.masked_fill(rows < kth[:, None], float("-inf"))


def _top_p(rows: torch.Tensor, ps: list[float]) -> torch.Tensor:
    if all(p >= 1.0 for p in ps):
        return rows
    sorted_logits, order = torch.sort(rows, descending=True, dim=-1)
    probs = torch.softmax(sorted_logits, dim=-1)
    before = probs.cumsum(-1) - probs  # mass of the tokens ranked above each one
    remove = before >= torch.tensor(ps, dtype=rows.dtype)[:, None]  # the token that crosses p is kept
    mask = torch.zeros_like(remove).scatter_(-1, order, remove)
    return rows.masked_fill(mask, float("-inf"))
