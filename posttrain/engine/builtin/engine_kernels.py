"""The trainer's side of zero mismatch: run a model on the builtin engine's kernels.

The builtin engine's forward pass uses the invariant attention and oneDNN linear layers; a
trainer that recomputes the engine's logprobs with the same model switched by
`use_engine_kernels` gets them to the bit (fp32).
"""

from __future__ import annotations

import torch

from posttrain.engine.builtin.invariant_attention import use_invariant_attention
from posttrain.engine.builtin.onednn_linear import use_onednn_linear


def use_engine_kernels(model: torch.nn.Module) -> torch.nn.Module:
    """Switch a loaded Hugging Face model to the engine's attention and linear kernels, in place."""
    return use_onednn_linear(use_invariant_attention(model))
