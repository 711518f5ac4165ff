"""Projections that read the same input computed as one oneDNN call: q/k/v, and gate/up.

A decode step runs 7 linear layers per transformer layer on a few rows; each call costs a fixed
dispatch and a pass over its own weight. Stacking the weights of the layers that share an input
(y = x [Wq; Wk; Wv]^T, then split) makes 4 calls of 7, and the bigger GEMM streams its weight
better. The engine uses it only where it is exact: oneDNN computes an output column the same way
whatever other columns share the call (`columns_agree` checks it at start-up on the model's own
shapes, as row_invariance.py checks rows), so the split results are the trainer's separate
layers' to the bit.

The stacked, reordered weight is made again whenever one of the layers' weights changes
(update_weights, an optimizer step), keyed as OneDNNLinear keys its own.
"""

from __future__ import annotations

import functools

import torch

from posttrain.engine.builtin import onednn_linear


class ConcatenatedLinear:
    """The layers' outputs for one input, from one call over their stacked weights."""

    def __init__(self, layers: list[torch.nn.Linear]) -> None:
        self.layers = layers
        self.sizes = [layer.out_features for layer in layers]
        self._weight: torch.Tensor | None = None
        self._bias: torch.Tensor | None = None
        self._key: tuple | None = None

    def __call__(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        together = self.stacked(x)
        if together is None:  # inference tensors: nothing to cache the stack under, so a call each
            return tuple(layer(x) for layer in self.layers)
        return together.split_with_sizes(self.sizes, dim=-1)

    def stacked(self, x: torch.Tensor) -> torch.Tensor | None:
        """The layers' outputs side by side, as one tensor [..., sum(sizes)]; None where the
        weights are inference tensors (no version counter to key the stack on)."""
        prepared = self.prepared()
        return None if prepared is None else onednn_linear._onednn(x, *prepared)

    def prepared(self) -> tuple[torch.Tensor, torch.Tensor | None] | None:
        """The stacked weight (reordered) and bias, made again when a layer's weight changed;
        None for inference-tensor weights."""
        # _parameters, not layer.weight: Module.__getattr__ would cost more than the call saves
        weights = [layer._parameters["weight"] for layer in self.layers]
        biases = [layer._parameters["bias"] for layer in self.layers]
        key = onednn_linear.cache_key(*weights, *biases)
        if key is None:
            return None
        if key != self._key:
            with torch.inference_mode(False), torch.no_grad():  # kept across steps: ordinary tensors
                self._weight = onednn_linear.reorder(torch.cat([weight.detach() for weight in weights]))
                self._bias = None if biases[0] is None else torch.cat([b.detach() for b in biases])
            self._key = key
        return self._weight, self._bias


def can_concatenate(layers: list[torch.nn.Module], dtype: torch.dtype) -> bool:
    """The layers are oneDNN linear layers on this CPU, in the model's dtype, alike in bias."""
    return (
        onednn_linear.AVAILABLE
        and all(isinstance(layer, onednn_linear.OneDNNLinear) for layer in layers)
        and all(layer.weight.dtype == dtype and layer.weight.device.type == "cpu" for layer in layers)
        and len({layer.bias is None for layer in layers}) == 1
    )


@functools.cache
def columns_agree(groups: tuple[tuple[int, tuple[int, ...]], ...], dtype: torch.dtype) -> bool:
    """For each (in_features, out_features of the stacked layers): one call over the stacked
    weights gives each layer's columns the same bits as that layer's own call, at decode-step
    and prefill row counts (the engine stacks them at every row count)."""
    if not onednn_linear.AVAILABLE:
        return False
    generator = torch.Generator().manual_seed(3)
    op = torch.ops.mkldnn._linear_pointwise
    with torch.inference_mode():
        for in_features, outs in groups:
            weights = [torch.randn(n, in_features, generator=generator).to(dtype) for n in outs]
            stacked = onednn_linear.reorder(torch.cat(weights))
            for rows in (2, 3, 16, 37, 130, 512):  # decode steps, drafts being verified, prefill chunks
                x = torch.randn(rows, in_features, generator=generator).to(dtype)
                together = op(x, stacked, None, "none", [], "").split(list(outs), dim=-1)
                for weight, part in zip(weights, together, strict=True):
                    alone = op(x, onednn_linear.reorder(weight), None, "none", [], "")
                    if not torch.equal(alone, part):
                        return False
    return True
