"""Int8 weights for the builtin engine on CPU: the fast variant's optional, lossy option.

torch's dynamic quantization: each linear layer's weight is stored as int8 with one scale per
output channel, and each call quantizes its input to 8 bits on the fly and runs an int8 GEMM
(fbgemm/x86). A pass reads a quarter of the weight bytes, which is what a CPU decode step waits
on. The MLP's down projections stay float32: their inputs (SiLU(gate) * up) carry outlier
activations that 8 bits with one scale per call cannot hold (quantizing them too cut greedy
agreement with float32 from ~0.8 to ~0.35 of next tokens on SmolLM2-135M).

Lossy, and not only in accuracy: an input's scale is taken over the whole call, so a row's
result depends on the other rows in the batch. Greedy output can then change with load, and the
bit-equal logprobs of the float32 engine (row_invariance.py) do not hold.
"""

from __future__ import annotations

import warnings

import torch

from posttrain.errors import PosttrainError

CHOICES = ("int8",)
KEEP_FLOAT = ("down_proj",)
_ENGINES = ("x86", "fbgemm")


def check_supported(model: torch.nn.Module) -> None:
    """One clear error where int8 weights cannot run."""
    engines = [e for e in _ENGINES if e in torch.backends.quantized.supported_engines]
    if not engines:
        raise PosttrainError(
            "--quantize int8: this torch build has no x86/fbgemm quantized kernels "
            f"(it has {', '.join(torch.backends.quantized.supported_engines) or 'none'})"
        )
    dtype = next(model.parameters()).dtype
    if dtype != torch.float32:
        raise PosttrainError(f"--quantize int8 quantizes float32 weights; this model is {dtype}")


def quantize_int8(model: torch.nn.Module) -> torch.nn.Module:
    """Switch the model's linear layers (except KEEP_FLOAT) to int8 weights, in place."""
    from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

    check_supported(model)
    engine = next(e for e in _ENGINES if e in torch.backends.quantized.supported_engines)
    torch.backends.quantized.engine = engine
    layers = {
        name: per_channel_dynamic_qconfig
        for name, module in model.named_modules()
        if type(module) is torch.nn.Linear and not name.endswith(KEEP_FLOAT)
    }
    with warnings.catch_warnings():
        # torch marks eager quantization deprecated in favour of torchao (not a dependency
        # here); it runs in the torch this project pins, and the warnings would reach users
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", UserWarning)
        return quantize_dynamic(model, layers, dtype=torch.qint8, inplace=True)
