"""Int8 weights (the fast variant's lossy option): which layers switch, that the engine runs on
them, and the one clear error where they cannot run."""

import pytest
import torch

from posttrain.engine.builtin.engine import BuiltinEngine
from posttrain.engine.builtin.quantization import KEEP_FLOAT, quantize_int8
from posttrain.engine.interface import GenerationRequest, SamplingParams
from posttrain.errors import PosttrainError


def test_linear_layers_but_the_down_projections_become_int8(tiny_model, tokenizer):
    quantize_int8(tiny_model)
    linear = {
        name: type(module) is torch.nn.Linear
        for name, module in tiny_model.named_modules()
        if name.endswith("proj") or name == "lm_head"
    }
    assert linear and all(plain == name.endswith(KEEP_FLOAT) for name, plain in linear.items())
    engine = BuiltinEngine(tiny_model, tokenizer, num_blocks=64, speculative=True)
    [completion] = engine.generate(
        [GenerationRequest("r", [1, 5, 6, 7, 5, 6], SamplingParams(temperature=0, max_tokens=12))]
    )
    assert len(completion.token_ids) == 12 and all(lp <= 0 for lp in completion.logprobs)


def test_int8_refuses_weights_that_are_not_float32(tiny_model):
    with pytest.raises(PosttrainError, match="quantizes float32 weights; this model is torch.bfloat16"):
        quantize_int8(tiny_model.to(torch.bfloat16))
