import torch
import torch.nn.functional as F

from posttrain.engine.builtin.invariant_attention import invariant_attention
from posttrain.engine.builtin.row_invariance import attention_agrees


def _qkv(length: int, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    return (
        torch.randn(1, 9, length, 64, generator=g),
        torch.randn(1, 3, length, 64, generator=g),
        torch.randn(1, 3, length, 64, generator=g),
    )


def test_it_computes_attention():
    q, k, v = _qkv(50)
    expected = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    assert torch.allclose(invariant_attention(q, k, v, None, 64**-0.5), expected, atol=1e-5)


def test_a_decode_query_equals_its_row_of_the_full_forward_to_the_bit():
    q, k, v = _qkv(300)  # longer than one key chunk
    bit_equal = attention_agrees(9, 3, 64, torch.float32)  # the engine's start-up probe
    full = invariant_attention(q, k, v, None, 64**-0.5)
    for t in (0, 5, 127, 128, 200, 299):
        # the engine's view: one query, the keys so far, padded to its block table with masked slots
        width = (t // 16 + 1) * 16 + 16
        keys = torch.cat([k[:, :, : t + 1], torch.randn(1, 3, width - t - 1, 64)], dim=2)
        values = torch.cat([v[:, :, : t + 1], torch.randn(1, 3, width - t - 1, 64)], dim=2)
        mask = (torch.arange(width) <= t)[None, None, None, :]
        one = invariant_attention(q[:, :, t : t + 1], keys, values, mask, 64**-0.5)
        if bit_equal:
            assert torch.equal(one[:, :, 0], full[:, :, t]), t
        else:  # this CPU's BLAS sums a 4-row product differently: the engine warns, noise remains
            assert torch.allclose(one[:, :, 0], full[:, :, t], atol=1e-6), t
