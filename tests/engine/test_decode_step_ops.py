"""The decode step's cheaper forms of the model's own arithmetic give its bits exactly
(model_runner.py): the one-pass rotation, RMSNorm without its module call, and attention
masks made once a step."""

from __future__ import annotations

import pytest
import torch
from transformers.models.llama.modeling_llama import LlamaRMSNorm, apply_rotary_pos_emb

from posttrain.engine.builtin.invariant_attention import attend_rows, excluded_keys
from posttrain.engine.builtin.model_runner import _norms_agree, _rms_norm, _rotate, _rotation


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("tokens", [1, 2, 7, 130])
def test_the_one_pass_rotation_gives_apply_rotary_pos_emb_bits(dtype, tokens):
    generator = torch.Generator().manual_seed(tokens)
    q = torch.randn(1, 9, tokens, 64, generator=generator).to(dtype)
    k = torch.randn(1, 3, tokens, 64, generator=generator).to(dtype)
    k[..., 5] = 0.0  # signed zeros: -0 * s and 0 * -s agree too
    cos, sin = (torch.randn(1, tokens, 64, generator=generator).to(dtype) for _ in range(2))
    expected_q, expected_k = apply_rotary_pos_emb(q, k, cos, sin)
    rotation = _rotation(cos, sin)
    assert torch.equal(_rotate(q, rotation), expected_q)
    assert torch.equal(_rotate(k, rotation), expected_k)
    assert torch.equal(_rotate(k, rotation).signbit(), expected_k.signbit())
    together = _rotate(torch.cat([q, k], dim=1), rotation)  # q and k heads in one pass
    assert torch.equal(together[:, :9], expected_q) and torch.equal(together[:, 9:], expected_k)


def test_rms_norm_without_its_module_gives_its_bits():
    norm = LlamaRMSNorm(576, eps=1e-5)
    norm.weight.data.normal_(generator=torch.Generator().manual_seed(1))
    x = torch.randn(1, 5, 576, generator=torch.Generator().manual_seed(2))
    assert torch.equal(_rms_norm(norm, x), norm(x))


class _OnePlusWeightNorm(LlamaRMSNorm):
    """A norm that scales by 1 + weight (as Gemma's does): the probe must send it to its module."""

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return (1.0 + self.weight) * (x * torch.rsqrt(variance + self.variance_epsilon))


def _decoder(norm_class, dtype=torch.float32):
    layers = torch.nn.ModuleList()
    for _ in range(2):
        layer = torch.nn.Module()
        layer.input_layernorm, layer.post_attention_layernorm = norm_class(16), norm_class(16)
        layers.append(layer)
    model = torch.nn.Module()
    model.model = torch.nn.Module()
    model.model.layers, model.model.norm = layers, norm_class(16)
    for parameter in model.parameters():
        parameter.data.normal_(generator=torch.Generator().manual_seed(3))
    return model.to(dtype)


def test_the_start_up_probe_keeps_norms_that_compute_otherwise_on_their_module():
    assert _norms_agree(_decoder(LlamaRMSNorm), torch.float32)
    assert not _norms_agree(_decoder(_OnePlusWeightNorm), torch.float32)
    assert not _norms_agree(_decoder(LlamaRMSNorm, torch.bfloat16), torch.bfloat16)  # its casts are real there


@pytest.mark.parametrize("queries", [1, 3, 6])
def test_attention_with_its_mask_made_once_gives_the_per_call_bits(queries):
    generator = torch.Generator().manual_seed(queries)
    rows = torch.randn(6, queries, 64, generator=generator)
    keys, values = torch.randn(6, 300, 64, generator=generator), torch.randn(6, 300, 64, generator=generator)
    mask = torch.rand(6, queries, 300, generator=generator) > 0.3
    once = excluded_keys(mask)
    assert once.shape[1] == max(queries, 4)  # padded to the GEMM's minimum rows
    assert torch.equal(attend_rows(rows, keys, values, None, 0.125, once), attend_rows(rows, keys, values, mask, 0.125))
