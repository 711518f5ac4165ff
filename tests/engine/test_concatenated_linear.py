"""ConcatenatedLinear: q/k/v (and gate/up) as one oneDNN call, to the bit what the trainer's
separate layers compute."""

import pytest
import torch

from posttrain.engine.builtin.concatenated_linear import ConcatenatedLinear, can_concatenate, columns_agree
from posttrain.engine.builtin.onednn_linear import AVAILABLE, use_onednn_linear

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="this torch build has no oneDNN linear op")


def projections(outs=(576, 192, 192), in_features=576, bias=False):
    torch.manual_seed(0)
    return list(use_onednn_linear(torch.nn.ModuleList(torch.nn.Linear(in_features, n, bias=bias) for n in outs)))


@pytest.mark.parametrize("bias", [False, True])
def test_the_split_outputs_are_each_layers_own_to_the_bit(bias):
    layers = projections(bias=bias)
    together = ConcatenatedLinear(layers)
    x = torch.randn(1, 40, 576)
    with torch.no_grad():
        trainer_side = [layer(x) for layer in layers]  # plain weights, autograd's path
    with torch.inference_mode():
        for rows in (slice(3, 4), slice(0, 2), slice(5, 21), slice(0, 40)):
            for got, expected in zip(together(x[:, rows]), trainer_side, strict=True):
                assert got.shape == expected[:, rows].shape
                assert torch.equal(got, expected[:, rows]), rows


def test_a_weight_changed_in_place_is_stacked_again():
    layers = projections(outs=(1536, 1536))
    together = ConcatenatedLinear(layers)
    x = torch.randn(4, 576)
    with torch.inference_mode():
        before = together(x)
    with torch.no_grad():
        layers[1].weight.mul_(0.5)  # as an optimizer step writes it
    with torch.inference_mode():
        after = together(x)
        assert torch.equal(after[0], before[0]) and not torch.equal(after[1], before[1])
        assert torch.equal(after[1], layers[1](x))


def test_layers_made_in_inference_mode_get_their_own_calls_bits():
    with torch.inference_mode():  # inference tensors keep no version counter to cache a stack under
        layers = projections()
        x = torch.randn(5, 576)
        got = ConcatenatedLinear(layers)(x)
        for part, layer in zip(got, layers, strict=True):
            assert torch.equal(part, layer(x))


def test_the_start_up_check_agrees_on_this_cpu_and_refuses_what_it_cannot_stack():
    assert columns_agree(((576, (576, 192, 192)), (576, (1536, 1536))), torch.float32)
    assert can_concatenate(projections(), torch.float32)
    assert not can_concatenate(projections(), torch.bfloat16)  # not the model's dtype
    plain = [torch.nn.Linear(8, 4), torch.nn.Linear(8, 4)]
    assert not can_concatenate(plain, torch.float32)  # not oneDNN layers
    mixed = projections(outs=(4, 4), in_features=8) + projections(outs=(4,), in_features=8, bias=True)
    assert not can_concatenate(mixed, torch.float32)  # one has a bias, the others not
