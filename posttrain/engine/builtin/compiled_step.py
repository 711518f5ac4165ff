"""The decoder stack of a step as one torch.compile graph: for serving, not for RL rollouts.

A decode step on a few rows is mostly small ops (norms, the rotation, SiLU, residual adds, ~80
a layer) between the linear layers; Inductor fuses them into a few loops a layer and calls
the rest from one graph, as vLLM does for its CPU engine. The linear layers stay oneDNN's calls
on the engine's reordered weights and attention stays the engine's own (the paged cache, the
DecodeCache, SharedPrefix), both as opaque custom ops inside the graph: only the small ops are
Inductor's.

What changes is the bits of those small ops (Inductor's fused RMSNorm sums in its own order),
so a compiled step no longer computes the trainer's logprobs to the bit: RL rollouts keep the
eager step (`logprob_mismatch_max` 0.0), and `posttrain serve` compiles only with --compile.
What stays is row invariance: every fused loop computes a row from that row alone, the same
code whatever the row count (one graph with a dynamic token dimension), so the fast variant's
verify steps give the standard variant's tokens (tests/engine/test_compiled_step.py).

The attention op finds its step's plan (slot mapping, _AttentionPlan) in a thread-local set by
the runner around the call: the graph carries tensors and ints, not the plan's Python objects.
"""

from __future__ import annotations

import functools
import logging
import threading

import torch

from posttrain.engine.builtin import onednn_linear

log = logging.getLogger(__name__)

_step = threading.local()  # .runner, .slot_mapping, .plan: the step the attention op serves


@torch.library.custom_op("posttrain::onednn_linear", mutates_args=())
def _linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    return torch.ops.mkldnn._linear_pointwise(x.contiguous(), weight, bias, "none", [], "")


@_linear.register_fake
def _(x, weight, bias):
    return x.new_empty(*x.shape[:-1], weight.shape[0])


@torch.library.custom_op("posttrain::paged_attention", mutates_args=())
def _attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, layer_index: int, scaling: float) -> torch.Tensor:
    runner, plan = _step.runner, _step.plan
    return runner.attend(layer_index, q, k, v, _step.slot_mapping, plan.window(runner.windows[layer_index]), scaling)


@_attention.register_fake
def _(q, k, v, layer_index, scaling):
    return q.new_empty(q.shape[2], q.shape[1], q.shape[3])


class UnsupportedModelError(ValueError):
    """The runner's model cannot take the compiled step; the message says why."""


def unsupported_reason(runner) -> str | None:
    """Why this runner's model cannot take the compiled step, or None: it needs the shapes the
    step is written for (Llama's, no per-head q/k norm), float32 oneDNN layers with stacked
    q/k/v and gate/up, plain RMSNorms and SiLU."""
    if not onednn_linear.AVAILABLE:
        return "this torch build has no oneDNN linear op"
    if runner.dtype != torch.float32:
        return f"the model is {runner.dtype}, the compiled step float32"
    if runner.family.qk_norm:
        return "per-head q/k norms (Qwen3) are not in the compiled step"
    if runner.qkv is None or runner.gate_up is None:
        return "the projections are not oneDNN float32 layers (int8 weights?)"
    if runner.qkv[0].prepared() is None:
        return "the weights are inference tensors (nothing to key the reordered weights on)"
    if runner.act is None or runner.norm.__name__ != "_rms_norm":
        return "the model's activation or norm is not the plain SiLU / RMSNorm"
    return None


class CompiledStack:
    """The decoder layers and the final norm of a ModelRunner, compiled once (dynamic token
    count) on the first call. UnsupportedModelError where unsupported_reason gives one."""

    def __init__(self, runner) -> None:
        reason = unsupported_reason(runner)
        if reason is not None:
            raise UnsupportedModelError(reason)
        self.runner = runner
        layers = runner.model.model.layers
        config = runner.model.config
        eps = tuple(
            (float(layer.input_layernorm.variance_epsilon), float(layer.post_attention_layernorm.variance_epsilon))
            for layer in layers
        )
        self._compiled = compiled_stack(
            (runner.num_heads, runner.num_kv_heads, runner.head_dim, config.intermediate_size),
            eps,
            float(runner.model.model.norm.variance_epsilon),
            float(layers[0].self_attn.scaling),
            _layout(self._weights()),
        )
        self.compiled_once = False

    def __call__(self, hidden: torch.Tensor, rotation: tuple, slot_mapping: torch.Tensor, plan) -> torch.Tensor:
        """The layers' output, or None where the first call's compilation failed (logged; the
        runner then steps eagerly). Compiling runs the attention op on fake tensors only, so a
        failed first call has written nothing."""
        _step.runner, _step.slot_mapping, _step.plan = self.runner, slot_mapping, plan
        try:
            out = self._compiled(hidden, *rotation, self._weights())
        except Exception as exc:  # noqa: BLE001 - any compiler failure: serve eagerly instead
            if self.compiled_once:  # a failure after compiling is the step's own: not hidden
                raise
            log.warning("compiling the decode step failed, it runs eagerly: %s", exc)
            return None
        finally:
            _step.runner = _step.slot_mapping = _step.plan = None
        self.compiled_once = True
        return out

    def _weights(self) -> dict:
        """The layers' current weights (the reordered ones remade when a weight changed)."""
        inner, qkv, gate_up = self.runner.model.model, self.runner.qkv, self.runner.gate_up
        return {
            "qkv": [group.prepared() for group in qkv],
            "gate_up": [group.prepared() for group in gate_up],
            "o": [_prepared(layer.self_attn.o_proj) for layer in inner.layers],
            "down": [_prepared(layer.mlp.down_proj) for layer in inner.layers],
            "norms": [
                (layer.input_layernorm._parameters["weight"], layer.post_attention_layernorm._parameters["weight"])
                for layer in inner.layers
            ],
            "norm": inner.norm._parameters["weight"],
        }


@functools.cache
def compiled_stack(shape: tuple, eps: tuple, final_eps: float, scaling: float, layout: tuple):
    """The compiled layer loop for one model shape, made once per process: every engine on
    that shape (a server's, a test's) reuses its graph instead of compiling again. `layout`
    (_layout of the weights) is part of the key because the graph keeps no tensor guards on
    the weights: checking ~200 tensors' metadata before every call cost 0.4 ms a step, and the
    weights of one key cannot differ in it."""

    def stack(hidden, cos, signed_sin, w):
        """ModelRunner._layers, written on tensors for the compiler (the same arithmetic as
        the eager step, in Inductor's kernels)."""
        heads, kv, dim, inter = shape
        tokens = hidden.shape[1]
        cos, signed_sin = cos.transpose(1, 2), signed_sin.transpose(1, 2)  # [1, tokens, 1, dim]
        rotated = (heads + kv) * dim
        linear = torch.ops.posttrain.onednn_linear
        for i, (qkv, gate_up) in enumerate(zip(w["qkv"], w["gate_up"])):
            in_eps, post_eps = eps[i]
            in_norm, post_norm = w["norms"][i]
            residual = hidden
            together = linear(_rms(hidden, in_norm, in_eps), *qkv)
            qk = _rotate(together[..., :rotated].view(1, tokens, heads + kv, dim), cos, signed_sin).transpose(1, 2)
            v = together[..., rotated:].view(1, tokens, kv, dim).transpose(1, 2)
            out = torch.ops.posttrain.paged_attention(qk[:, :heads], qk[:, heads:], v, i, scaling)
            hidden = residual + linear(out.reshape(1, tokens, -1), *w["o"][i])
            residual = hidden
            gate, up = linear(_rms(hidden, post_norm, post_eps), *gate_up).split([inter, inter], dim=-1)
            hidden = residual + linear(torch.nn.functional.silu(gate) * up, *w["down"][i])
        return _rms(hidden, w["norm"], final_eps)

    return torch.compile(stack, dynamic=True, fullgraph=True, options={"guard_filter_fn": _unguarded_weights})


def _unguarded_weights(guard_entries) -> list[bool]:
    """Keep every guard but the tensor guards on the weights (see compiled_stack): the ones
    on their structure stay, so a model with biases never runs a graph traced without them."""
    return [not (entry.guard_type == "TENSOR_MATCH" and entry.name.startswith("w[")) for entry in guard_entries]


def _layout(weights: dict) -> tuple:
    """Shape, stride and dtype of every weight (None for a missing bias), in order."""
    tensors = [t for pair in weights["qkv"] + weights["gate_up"] + weights["o"] + weights["down"] for t in pair]
    tensors += [t for pair in weights["norms"] for t in pair] + [weights["norm"]]
    return tuple(None if t is None else (tuple(t.shape), t.stride(), t.dtype) for t in tensors)


def _rotate(x: torch.Tensor, cos: torch.Tensor, signed_sin: torch.Tensor) -> torch.Tensor:
    """model_runner._rotate's x * cos + roll(x) * signed_sin, term for term, on x [1, tokens,
    heads, dim] with the halves spelled out: Inductor turns roll into a gather of computed
    indices, 7x slower than eager on a 512-token chunk, and this into two vector loops."""
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    first = x1 * cos[..., :half] + x2 * signed_sin[..., :half]
    return torch.cat((first, x2 * cos[..., half:] + x1 * signed_sin[..., half:]), dim=-1)


def _rms(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    return weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def _prepared(layer: onednn_linear.OneDNNLinear) -> tuple:
    return layer._reordered_weight(), layer._parameters["bias"]
