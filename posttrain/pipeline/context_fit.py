"""Whether a run's context fits the model and the KV cache, checked at `--check` (and at a run's
start) before any weight is loaded: each refusal is one line naming the config key and the
number it would need.

    model      a sequence's positions (prompt + reply, or an agent's whole context) must stay
               within the model's max_position_embeddings
    KV cache   the builtin engine must hold one whole sequence in its cache: num_blocks x
               block_size tokens; a refusal also says what the needed cache costs in bytes at
               the configured [engine] kv_cache_dtype (int8: about a quarter of fp32's)
    agent      one reply must fit the context beside a prompt: reply_tokens < max_context_tokens

An agent's max_steps is not bounded by the context: the layered context (agent/context.py)
drops the oldest turns to keep each prompt within max_context_tokens.
"""

from __future__ import annotations

import json
import math

from posttrain.config import RunConfig
from posttrain.errors import PosttrainError

# the embedded SmolLM2's max_position_embeddings, as its config says (a test checks): its
# directory is made on first use, which --check must not wait for. tiny-llama, random weights
# for tests, was never trained at any length: no limit
EMBEDDED_POSITIONS = {"smollm2-135m": 8192}
# (layers, kv heads, head dim) of the embedded models, as their configs say (a test checks)
EMBEDDED_KV_SHAPES = {"smollm2-135m": (30, 3, 64), "tiny-llama": (2, 2, 16)}


def model_positions(model: str) -> int | None:
    """The model's max_position_embeddings from its config.json, read as JSON (transformers and
    torch load later); None where the config does not say."""
    embedded, config = _model_config(model)
    if embedded is not None:
        return EMBEDDED_POSITIONS.get(embedded)
    positions = (config or {}).get("max_position_embeddings")
    return positions if isinstance(positions, int) else None


def model_kv_shape(model: str) -> tuple[int, int, int] | None:
    """(layers, kv heads, head dim) from the model's config.json; None where it does not say."""
    embedded, config = _model_config(model)
    if embedded is not None:
        return EMBEDDED_KV_SHAPES.get(embedded)
    config = config or {}
    layers, heads, hidden = (config.get(k) for k in ("num_hidden_layers", "num_attention_heads", "hidden_size"))
    if not all(isinstance(v, int) and v > 0 for v in (layers, heads, hidden)):
        return None
    return layers, config.get("num_key_value_heads") or heads, config.get("head_dim") or hidden // heads


def _model_config(model: str) -> tuple[str | None, dict | None]:
    """(the embedded model's name, None) where the model (or an adapter's base) is embedded, else
    (None, its config.json as JSON, or None where unreadable)."""
    from posttrain.models.spec import EMBEDDED, adapter_base_model, is_adapter_dir, local_model_dir

    if model in EMBEDDED:
        return model, None
    directory = local_model_dir(model)
    while directory is not None and is_adapter_dir(directory):
        base = adapter_base_model(directory)
        if base in EMBEDDED:
            return base, None
        directory = local_model_dir(base)
    if directory is None:
        return None, None
    try:
        return None, json.loads((directory / "config.json").read_text())
    except (OSError, json.JSONDecodeError):
        return None, None  # check_builtin_family names a broken config.json


def _cache_cost(config: RunConfig, blocks: int, kv_shape: tuple[int, int, int] | None) -> str:
    """', N MiB of int8 KV cache (B bytes a token)' for `blocks` blocks, or '' with no shape."""
    from posttrain.engine.builtin.kv_quant import bytes_per_token

    if kv_shape is None:
        return ""
    dtype = config.engine.kv_cache_dtype
    per_token = bytes_per_token(dtype, *kv_shape)
    mib = blocks * config.engine.block_size * per_token / 2**20
    return f" ({mib:,.1f} MiB of {'int8' if dtype == 'int8' else 'fp32'} KV cache at {per_token} bytes a token)"


def check_context_fits(config: RunConfig, positions: int | None, kv_shape: tuple[int, int, int] | None = None) -> None:
    """Raise PosttrainError, one line, for the first setting whose sequences cannot fit the model
    (`positions`: its max_position_embeddings, None if unknown) or the builtin engine's KV cache
    (`kv_shape`: the model's (layers, kv heads, head dim), to say what the cache it needs costs)."""
    model = config.model.name
    agent = any(domain.kind == "terminal" for domain in config.domains)
    cache = config.engine.num_blocks * config.engine.block_size if config.engine.backend == "builtin" else None
    block = config.engine.block_size
    if agent:
        context = config.agent.max_context_tokens
        if positions is not None and context > positions:
            raise PosttrainError(
                f"[agent] max_context_tokens = {context} is more than {model}'s max_position_embeddings "
                f"({positions}): set max_context_tokens <= {positions}"
            )
        if cache is not None and context > cache:
            raise PosttrainError(
                f"[engine] num_blocks = {config.engine.num_blocks} holds {cache} tokens, less than one episode's "
                f"[agent] max_context_tokens = {context}: it needs num_blocks >= {math.ceil(context / block)}"
                + _cache_cost(config, math.ceil(context / block), kv_shape)
            )
        if config.agent.reply_tokens >= context:
            raise PosttrainError(
                f"[agent] reply_tokens = {config.agent.reply_tokens} leaves no room for a prompt in max_context_tokens "
                f"= {context}: it needs max_context_tokens > {config.agent.reply_tokens} + the prompt's tokens"
            )
    if all(domain.kind == "terminal" for domain in config.domains):
        return
    for key, tokens in (
        ("[rollout] max_new_tokens", config.rollout.max_new_tokens),
        ("[train] eval_max_new_tokens", config.train.eval_max_new_tokens),
    ):
        if tokens is None:
            continue
        if positions is not None and tokens + 1 > positions:  # a prompt has at least one token
            raise PosttrainError(
                f"{key} = {tokens} leaves no room for a prompt in {model}'s max_position_embeddings ({positions}): "
                f"a reply of {tokens} tokens needs {tokens} + the prompt's positions; set it below {positions}"
            )
        if cache is not None and tokens + 1 > cache:
            raise PosttrainError(
                f"[engine] num_blocks = {config.engine.num_blocks} holds {cache} tokens, less than {key} = {tokens} "
                f"plus a prompt: it needs num_blocks >= {math.ceil((tokens + 1) / block)} + the prompt's blocks"
                + _cache_cost(config, math.ceil((tokens + 1) / block), kv_shape)
            )
