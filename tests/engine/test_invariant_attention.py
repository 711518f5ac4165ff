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


def test_a_prefix_shared_by_a_batch_read_once_gives_the_same_bits():
    from posttrain.engine.builtin.invariant_attention import KEY_CHUNK, SharedPrefix, attend_rows

    g = torch.Generator().manual_seed(4)
    sequences, heads, width, dim = 4, 3, 2 * KEY_CHUNK + 40, 64
    keys = torch.randn(sequences, heads, width, dim, generator=g)
    values = torch.randn(sequences, heads, width, dim, generator=g)
    bit_equal = attention_agrees(9, 3, 64, torch.float32)
    for length in (KEY_CHUNK - 28, KEY_CHUNK, KEY_CHUNK + 50):  # ending inside, at and after a chunk
        keys[:, :, :length], values[:, :, :length] = keys[:1, :, :length], values[:1, :, :length]
        rows = torch.randn(sequences * heads, 3, dim, generator=g)
        ends = torch.tensor([length + 1, width, length + 70, width - 9])
        mask = (torch.arange(width)[None, :] < ends[:, None]).view(sequences, 1, 1, width)
        mask = mask.expand(sequences, heads, 3, width).reshape(-1, 3, width)
        flat_k, flat_v = keys.reshape(-1, width, dim), values.reshape(-1, width, dim)
        plain = attend_rows(rows, flat_k, flat_v, mask, dim**-0.5)
        shared = SharedPrefix(keys[0, :, :length].transpose(-1, -2), values[0, :, :length], sequences)
        # the shared path never reads a row's own copy of the prefix: spoil it to prove it
        flat_k, flat_v = flat_k.clone(), flat_v.clone()
        flat_k[:, :length], flat_v[:, : length // KEY_CHUNK * KEY_CHUNK] = float("nan"), float("nan")
        once = attend_rows(rows, flat_k, flat_v, mask, dim**-0.5, shared=shared)
        assert not once.isnan().any()
        if bit_equal:
            assert torch.equal(once, plain), length
        else:
            assert torch.allclose(once, plain, atol=1e-6), length
