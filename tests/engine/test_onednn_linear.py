"""OneDNNLinear: the linear kernel the builtin engine and the trainer share."""

import pytest
import torch
import torch.nn.functional as F

from posttrain.engine.builtin.onednn_linear import AVAILABLE, OneDNNLinear, use_onednn_linear

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="this torch build has no oneDNN linear op")


def layer(in_features=576, out_features=1536, bias=False):
    torch.manual_seed(0)
    model = use_onednn_linear(torch.nn.Sequential(torch.nn.Linear(in_features, out_features, bias=bias)))
    assert type(model[0]) is OneDNNLinear
    return model[0]


@pytest.mark.parametrize("bias", [False, True])
def test_a_row_is_the_same_in_any_call_reordered_or_plain(bias):
    linear = layer(bias=bias)
    x = torch.randn(300, 576)
    with torch.no_grad():
        trainer_side = linear(x[None])[0]  # the plain weight, one long call
    with torch.inference_mode():  # the engine's side: the reordered weight, calls of any size
        for rows in (slice(7, 8), slice(0, 2), slice(5, 17), slice(100, 228)):
            assert torch.equal(linear(x[rows]), trainer_side[rows]), rows
    assert torch.allclose(trainer_side, F.linear(x, linear.weight, linear.bias), atol=1e-4)


def test_gradients_are_those_of_a_linear_layer():
    linear = layer(bias=True)
    x = torch.randn(3, 9, 576, requires_grad=True)
    linear(x).square().sum().backward()
    ours = x.grad.clone(), linear.weight.grad.clone(), linear.bias.grad.clone()
    x.grad = linear.weight.grad = linear.bias.grad = None
    F.linear(x, linear.weight, linear.bias).square().sum().backward()
    for got, expected in zip(ours, (x.grad, linear.weight.grad, linear.bias.grad)):
        assert torch.allclose(got, expected, rtol=1e-4, atol=1e-3)


def test_the_reordered_weight_follows_in_place_updates():
    linear = layer()
    x = torch.randn(16, 576)
    with torch.inference_mode():
        before = linear(x)
    with torch.no_grad():
        linear.weight.mul_(-2.0)  # what update_weights and an optimizer step do: write in place
        plain = linear(x)
    with torch.inference_mode():
        after = linear(x)
    assert torch.equal(after, plain) and not torch.equal(after, before)
