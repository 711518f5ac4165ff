"""The model families the builtin engine's forward pass computes, and what differs between them.

The forward pass (model_runner.py) calls the Hugging Face model's own modules, so a family is
supported when its decoder layer is the Llama shape (norm, attention, residual, norm, MLP,
residual) and everything else that differs lives inside a module the runner calls. What does
not, the runner does itself, from this table:

    llama     the reference shape (SmolLM2, Llama 2/3; optional q/k/v/o and MLP biases)
    qwen2     q/k/v biases (inside the projections); sliding window on the layers
              `layer_types` marks "sliding_attention" (only with use_sliding_window)
    qwen3     queries and keys RMS-normalised per head (q_norm, k_norm) before the rotation;
              sliding window as qwen2
    mistral   a sliding window on every layer: a query sees the `sliding_window` keys up to
              and including its own position (kv > q - window, as transformers masks it)
    gemma     embeddings scaled by sqrt(hidden) (inside Gemma's embedding module), (1 + w)
              RMSNorm and GeLU MLP (inside their modules)

Any other `model_type` would run the Llama arithmetic on weights meant for another and give
wrong logits without an error, so `check_supported` refuses it before anything is generated.
"""

from __future__ import annotations

from dataclasses import dataclass

from posttrain.errors import ModelLoadError


@dataclass(frozen=True)
class Family:
    qk_norm: bool = False  # per-head RMSNorm of queries and keys (attn.q_norm, attn.k_norm)


FAMILIES = {
    "llama": Family(),
    "qwen2": Family(),
    "qwen3": Family(qk_norm=True),
    "mistral": Family(),
    "gemma": Family(),
}
SUPPORTED = tuple(FAMILIES)
_LAYER_TYPES = {"full_attention", "sliding_attention"}  # transformers' layer_types the runner computes


class UnsupportedModelError(ModelLoadError):
    pass


def check_supported(config) -> Family:
    """The family of a model config; raises UnsupportedModelError (one line naming the
    supported families) for any other model_type or layer type."""
    model_type = getattr(config, "model_type", None)
    if model_type not in FAMILIES:
        raise UnsupportedModelError(
            f"the builtin engine does not support model_type {model_type!r}; supported: {', '.join(SUPPORTED)} "
            "(use the hf backend, e.g. hf:DIR, for other models)"
        )
    other = sorted({t for t in getattr(config, "layer_types", None) or () if t not in _LAYER_TYPES})
    if other:
        raise UnsupportedModelError(
            f"the builtin engine does not support {model_type} layer types {other}; supported: {sorted(_LAYER_TYPES)}"
        )
    return FAMILIES[model_type]


def attention_windows(config) -> list[int | None]:
    """Per layer: the sliding window (a query sees keys q - window < k <= q), or None for full
    causal attention. Mirrors how each family's transformers code picks the mask."""
    layers = config.num_hidden_layers
    window = getattr(config, "sliding_window", None)
    if config.model_type == "mistral":
        return [window] * layers
    types = getattr(config, "layer_types", None)
    if not types or window is None:
        return [None] * layers
    return [window if kind == "sliding_attention" else None for kind in types]
