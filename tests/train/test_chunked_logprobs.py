"""Logprobs over chunks of positions and activation checkpointing: the memory savers for long
episodes compute what the plain path computes (logprobs to the bit on the engine's kernels,
gradients to float tolerance), and they are really in effect."""

import copy

import pytest
import torch

from posttrain.config import AlgorithmConfig, OptimConfig
from posttrain.engine.builtin.engine_kernels import use_engine_kernels
from posttrain.train.logprobs import pad_right, token_logprobs
from posttrain.train.samples import TrainSample
from posttrain.train.trainer import PolicyTrainer
from tests.conftest import assert_logprobs_match, expects_bit_equality


def _sequences():
    generator = torch.Generator().manual_seed(0)
    prompt = torch.randint(3, 250, (20,), generator=generator).tolist()
    return [prompt + torch.randint(3, 250, (n,), generator=generator).tolist() for n in (17, 9, 12)]


def _samples():
    return [
        TrainSample(s[:20], s[20:], [-1.0] * (len(s) - 20), advantage, [1] * 3 + [0] * 2 + [1] * (len(s) - 25))
        for s, advantage in zip(_sequences(), (1.0, -0.5, 0.25))
    ]


@pytest.mark.parametrize("chunk", [1, 5, 16, 4096])
@pytest.mark.parametrize("bf16", [False, True])
def test_chunked_logprobs_equal_the_whole_projection(tiny_model, chunk, bf16):
    model = use_engine_kernels(tiny_model)
    ids, mask = pad_right(_sequences(), pad_id=0)
    for first, prefix in ((0, 0), (19, 0), (19, 19)):
        kwargs = dict(temperature=0.7, bf16_autocast=bf16, with_entropy=True, first_position=first)
        with torch.no_grad():
            whole = token_logprobs(model, ids, mask, prefix_length=prefix, **kwargs)
            chunked = token_logprobs(model, ids, mask, prefix_length=prefix, chunk_tokens=chunk, **kwargs)
        for a, b in zip(whole, chunked):
            assert a.shape == b.shape
            assert_logprobs_match(a, b, expects_bit_equality(model), (chunk, first, prefix))


def test_no_lm_head_call_holds_more_than_a_chunk_of_positions(tiny_model):
    model = use_engine_kernels(tiny_model)
    rows = []
    handle = model.lm_head.register_forward_hook(lambda module, inputs, output: rows.append(output.shape[:2]))
    ids, mask = pad_right(_sequences(), pad_id=0)
    logprobs, _ = token_logprobs(model, ids, mask, chunk_tokens=12)
    logprobs.sum().backward()
    handle.remove()
    # 3 rows x 4 positions per chunk, 36 positions: 9 calls in forward, each again in backward
    assert rows and all(batch * positions <= 12 for batch, positions in rows)
    assert len(rows) == 2 * 9


def _gradients(model, **optim) -> dict[str, torch.Tensor]:
    trainer = PolicyTrainer(
        copy.deepcopy(model), OptimConfig(lr=1e-4, **optim), AlgorithmConfig(), temperature=1.0, pad_id=0
    )
    return trainer.loss_gradient(_samples())


def _assert_close(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> None:
    assert a.keys() == b.keys()
    for name in a:
        scale = b[name].abs().max()
        assert scale > 0, name
        assert (a[name] - b[name]).abs().max() <= 1e-5 * scale, name


def test_chunked_logprobs_give_the_same_gradients(tiny_model):
    model = use_engine_kernels(tiny_model)
    _assert_close(_gradients(model, logprob_chunk_tokens=7), _gradients(model, logprob_chunk_tokens=0))


def test_activation_checkpointing_gives_the_same_gradients_and_recomputes_the_layers(tiny_model):
    model = use_engine_kernels(tiny_model)
    calls = []
    # a module early in the layer: the layer's own hooks stay outside its checkpoint, and the
    # recompute stops once the last activation it needs is back (inside the MLP)
    handle = model.model.layers[0].self_attn.register_forward_hook(lambda *args: calls.append(1))
    plain = _gradients(model, activation_checkpointing=False, shared_prefix=False)
    plain_calls, calls[:] = len(calls), []
    checkpointed = _gradients(model, activation_checkpointing=True)
    handle.remove()
    assert len(calls) == 2 * plain_calls  # each layer runs again in the backward pass
    _assert_close(checkpointed, plain)
    _assert_close(_gradients(model, activation_checkpointing=True, logprob_chunk_tokens=0), plain)
