import math

import torch

from posttrain.engine.builtin.sampler import sample
from posttrain.engine.interface import SamplingParams


def test_greedy_rows_take_the_argmax_with_the_untempered_logprob():
    logits = torch.tensor([[0.0, 2.0, 1.0]])
    tokens, logprobs = sample(logits, [SamplingParams(temperature=0.0)], [None])
    assert tokens == [1]
    # log softmax at index 1: 2 - log(e^0 + e^2 + e^1)
    assert math.isclose(logprobs[0], 2 - math.log(1 + math.e**2 + math.e), rel_tol=1e-6)


def test_top_k_and_top_p_truncate_but_logprobs_do_not():
    logits = torch.tensor([[3.0, 2.0, 1.0, 0.0]] * 2)
    params = [SamplingParams(temperature=1.0, top_k=1), SamplingParams(temperature=1.0, top_p=0.5)]
    for seed in range(20):
        gens = [torch.Generator().manual_seed(seed), torch.Generator().manual_seed(seed + 100)]
        tokens, logprobs = sample(logits, params, gens)
        # top-k 1 keeps only token 0; top-p 0.5: p(0) = 0.644 already crosses 0.5, so only token 0
        assert tokens == [0, 0]
        expected = 3 - math.log(sum(math.exp(v) for v in (3, 2, 1, 0)))
        assert all(math.isclose(lp, expected, rel_tol=1e-6) for lp in logprobs)


def test_temperature_sampling_follows_the_distribution_and_is_seeded():
    logits = torch.log(torch.tensor([[0.7, 0.2, 0.1]]))
    params = [SamplingParams(temperature=1.0)]
    draws = [sample(logits, params, [torch.Generator().manual_seed(s)])[0][0] for s in range(3000)]
    freq = [draws.count(k) / len(draws) for k in range(3)]
    assert abs(freq[0] - 0.7) < 0.04 and abs(freq[1] - 0.2) < 0.04 and abs(freq[2] - 0.1) < 0.03
    again = [sample(logits, params, [torch.Generator().manual_seed(s)])[0][0] for s in range(50)]
    assert again == draws[:50]


def test_two_level_cdf_inversion_picks_what_one_cumsum_picks_and_never_a_zero_mass_token():
    from posttrain.engine.builtin.sampler import CDF_BLOCK, invert_cdf

    generator = torch.Generator().manual_seed(0)
    vocab = 3 * CDF_BLOCK + 77  # a ragged last block
    probs = torch.rand(64, vocab, generator=generator) ** 8  # peaked, like a model's
    probs[probs < 0.05] = 0.0  # many exact zeros, whole zero blocks in some rows
    probs[:8, : 2 * CDF_BLOCK] = 0.0
    probs[8:16, CDF_BLOCK:] = 0.0
    uniform = torch.rand(64, generator=generator)
    uniform[:4] = 0.0
    uniform[4:8] = torch.nextafter(torch.tensor(1.0), torch.tensor(0.0))  # the largest u below 1
    picks = invert_cdf(probs, uniform)
    assert bool((probs[torch.arange(64), picks] > 0).all())
    cdf = probs.double().cumsum(-1)
    reference = torch.searchsorted(cdf, (uniform.double() * cdf[:, -1])[:, None], right=True).squeeze(-1)
    reference = reference.clamp(max=vocab - 1)
    # float32 block sums against a float64 cumsum: they agree except within rounding of a boundary
    assert (picks == reference).float().mean() >= 0.95
