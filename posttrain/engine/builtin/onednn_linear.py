"""Linear layers on oneDNN's fp32 GEMM: the kernel the builtin engine and the trainer both run.

`F.linear` on CPU calls MKL's sgemm. At a decode batch's row count (a few to a few hundred rows)
with the weights coming from memory, sgemm runs well below the CPU's peak; oneDNN, with the
weight reordered once into its blocked layout, computes the same products 1.2-2.2x faster, and
the 49k-row output projection 2-3.2x faster (benchmarks/linear_kernels.py).

Zero mismatch needs the engine and the trainer to compute the same bits, so both go through
this module. What makes that possible: oneDNN's result for a row does not depend on how many
other rows are in the call (checked from 2 rows to thousands; a single row is computed as one
of two), nor on whether the weight was reordered first. So the engine uses the reordered weight
(in inference mode; made again whenever the weight tensor changes), and the trainer the plain
one with autograd (the backward pass is ordinary matmuls: only the forward's bits must match
the engine's).

`use_onednn_linear(model)` switches a model's `nn.Linear` layers in place (their class changes,
their parameters do not). Off CPU, or in a torch build without the oneDNN op, the layers fall
back to `F.linear`, the same on both sides.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def _probe() -> bool:
    op = getattr(getattr(torch.ops, "mkldnn", None), "_linear_pointwise", None)
    if op is None or not torch.backends.mkldnn.is_available():
        return False
    try:
        x, w = torch.ones(4, 8), torch.ones(3, 8)
        return torch.equal(op(x, w, None, "none", [], ""), F.linear(x, w))
    except Exception:  # an op that exists but cannot run here
        return False


AVAILABLE = _probe()


def _onednn(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    if x.numel() == x.shape[-1]:
        # one row takes oneDNN's matrix-vector path, which sums in another order: compute it
        # as the first of two rows, as every longer call would
        rows = torch.cat([x.reshape(1, -1), x.new_zeros(1, x.shape[-1])])
        return torch.ops.mkldnn._linear_pointwise(rows, weight, bias, "none", [], "")[:1].reshape(*x.shape[:-1], -1)
    return torch.ops.mkldnn._linear_pointwise(x.contiguous(), weight, bias, "none", [], "")


class _OneDNNLinearFunction(torch.autograd.Function):
    """y = x W^T + b with oneDNN's forward and the usual gradients."""

    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        return _onednn(x, weight, bias)

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        grad_x = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_x = grad.matmul(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad.reshape(-1, grad.shape[-1]).t().matmul(x.reshape(-1, x.shape[-1]))
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_bias = grad.reshape(-1, grad.shape[-1]).sum(0)
        return grad_x, grad_weight, grad_bias


class OneDNNLinear(torch.nn.Linear):
    """An nn.Linear whose forward is oneDNN's (see the module docstring)."""

    _reordered: torch.Tensor | None = None
    _reordered_key: tuple | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not AVAILABLE or x.device.type != "cpu" or x.dtype != self.weight.dtype:
            return F.linear(x, self.weight, self.bias)
        if torch.is_inference_mode_enabled():
            return _onednn(x, self._reordered_weight(), self.bias)
        if torch.is_grad_enabled():
            return _OneDNNLinearFunction.apply(x, self.weight, self.bias)
        return _onednn(x, self.weight, self.bias)

    def _reordered_weight(self) -> torch.Tensor:
        """The weight in oneDNN's blocked layout, made again whenever the weight tensor is
        replaced or written in place (update_weights, an optimizer step)."""
        weight = self.weight
        key = cache_key(weight)
        if key is None:
            return weight
        if key != self._reordered_key:
            self._reordered = reorder(weight)
            self._reordered_key = key
        return self._reordered


def cache_key(*tensors: torch.Tensor | None) -> tuple | None:
    """What a weight derived from these tensors is cached under: it changes when one of them is
    replaced or written in place. None where one is an inference tensor, which keeps no version
    counter: do not cache."""
    try:
        return tuple((t.data_ptr(), t._version) for t in tensors if t is not None)
    except RuntimeError:
        return None


def reorder(weight: torch.Tensor) -> torch.Tensor:
    """The weight in oneDNN's blocked layout, as an ordinary tensor usable in any mode."""
    with torch.inference_mode(False), torch.no_grad():
        return torch.ops.mkldnn._reorder_linear_weight(weight.detach(), 128)


def use_onednn_linear(model: torch.nn.Module) -> torch.nn.Module:
    """Switch every plain nn.Linear of the model to OneDNNLinear, in place; returns the model."""
    for module in model.modules():
        if type(module) is torch.nn.Linear:
            module.__class__ = OneDNNLinear
    return model
