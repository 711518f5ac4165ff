"""Attention whose result for a query does not depend on what else is in the batch.

The builtin engine computes a token's logprob in a decode step (one query, the keys so far);
the trainer recomputes it in one forward over the whole sequence (every query, every key, a
causal mask). For the two to agree to the last bit, each query's arithmetic must be the same in
both. Fused kernels (SDPA flash) pick their blocking from the sequence lengths, so they do not
give that. Plain attention does, on CPU, when

    scores = (q @ k^T) * scale      each score is one length-D dot product
    scores[masked] = finfo.min      exp() of it is exactly 0: masked keys add exact zeros
    p = softmax(scores)             a row reduction, unchanged by trailing zeros
    out = sum over key chunks c, in order, of p[:, c] @ v[c]

and every GEMM has at least MIN_QUERY_ROWS rows (with fewer, BLAS takes a matrix-vector path
that sums in another order). The last product is split into chunks of KEY_CHUNK keys because a
GEMM's summation order depends on its inner size: with a fixed chunk size every chunk is summed
the same way, and the chunks past a query's last key contribute exact zeros, so the result does
not depend on how many keys (the trainer's whole sequence, the engine's context) follow. The
query heads that share a key/value head are stacked into the GEMM's rows (grouped-query
attention without repeating keys), so a one-token decode step has `heads / kv_heads` rows; it
is padded up to the minimum.

Long query runs (the trainer's whole sequences) go in blocks of QUERY_BLOCK queries, each over
the keys up to the last one any of its queries sees: the skipped key chunks are the ones that
would add exact zeros, so this is the same arithmetic at about half the cost of a causal T x T.

A decode batch whose sequences share a prompt prefix in the paged cache (one system prompt,
n samples of one prompt) reads that prefix's keys and values once instead of once per sequence
(SharedPrefix): the scores against them are one GEMM per key/value head whose rows are every
sequence's queries, as are the value chunks that lie wholly inside the prefix. Each score and
each chunk product is the same dot product as before, and the chunks are summed in the same
order, so the result is the same to the bit; a decode step is bound by reading keys and values,
and this reads fewer of them.

`register()` makes it a Hugging Face attention implementation, "posttrain_invariant", so the
trainer's model runs the same function (with autograd) as the engine.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

NAME = "posttrain_invariant"
MIN_QUERY_ROWS = 4
KEY_CHUNK = 128
QUERY_BLOCK = 128


def invariant_attention(
    query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, mask: torch.Tensor | None, scale: float
) -> torch.Tensor:
    """query [B, H, Tq, D]; key, value [B, Hkv, Tk, D]; mask bool, broadcastable to
    [B, 1, Tq, Tk] (True = attend), or None for causal with the queries at the end.
    Returns [B, H, Tq, D]."""
    batch, heads, q_len, dim = query.shape
    k_len = key.shape[2]
    if mask is None:
        mask = torch.ones(q_len, k_len, dtype=torch.bool, device=query.device).tril(k_len - q_len)
    mask = mask.expand(batch, 1, q_len, k_len)
    if q_len <= QUERY_BLOCK:
        return _attend(query, key, value, mask, scale)
    outputs = []
    for start in range(0, q_len, QUERY_BLOCK):
        block = mask[:, :, start : start + QUERY_BLOCK]
        seen = block.any(dim=2).any(dim=0).flatten().nonzero()
        end = int(seen[-1]) + 1 if len(seen) else 1
        outputs.append(
            _attend(
                query[:, :, start : start + QUERY_BLOCK], key[:, :, :end], value[:, :, :end], block[..., :end], scale
            )
        )
    return torch.cat(outputs, dim=2)


def _attend(
    query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, mask: torch.Tensor, scale: float
) -> torch.Tensor:
    batch, heads, q_len, dim = query.shape
    kv_heads, k_len = key.shape[1], key.shape[2]
    group = heads // kv_heads
    rows = query.reshape(batch * kv_heads, group * q_len, dim)  # row g * Tq + t: head kv * G + g, query t
    mask = (
        mask.unsqueeze(2).expand(batch, kv_heads, group, q_len, k_len).reshape(batch * kv_heads, group * q_len, k_len)
    )
    out = attend_rows(
        rows, key.reshape(batch * kv_heads, k_len, dim), value.reshape(batch * kv_heads, k_len, dim), mask, scale
    )
    return out.reshape(batch, heads, q_len, dim)


@dataclass(frozen=True)
class SharedPrefix:
    """The first `length` keys and values, the same for each of `sequences` consecutive groups of
    rows in an attend_rows call of N = sequences * heads pairs (pair s * heads + h: sequence s,
    key/value head h): keys_t [heads, D, length] (transposed), values [heads, length, D]."""

    keys_t: torch.Tensor
    values: torch.Tensor
    sequences: int

    @property
    def length(self) -> int:
        return self.keys_t.shape[-1]

    def stacked(self, per_pair: torch.Tensor) -> torch.Tensor:
        """[N, M, X] -> [heads, sequences * M, X]: every sequence's rows of a head, stacked."""
        _, rows, width = per_pair.shape
        heads = self.keys_t.shape[0]
        return per_pair.reshape(self.sequences, heads, rows, width).transpose(0, 1).reshape(heads, -1, width)

    def unstacked(self, per_head: torch.Tensor, rows: int) -> torch.Tensor:
        """The inverse of stacked: [heads, sequences * rows, X] -> [N, rows, X]."""
        heads, _, width = per_head.shape
        return per_head.view(heads, self.sequences, rows, width).transpose(0, 1).reshape(-1, rows, width)


def attend_rows(
    rows: torch.Tensor,
    keys: torch.Tensor,
    values: torch.Tensor,
    mask: torch.Tensor | None,
    scale: float,
    excluded: torch.Tensor | None = None,
    shared: SharedPrefix | None = None,
) -> torch.Tensor:
    """The arithmetic itself, on N independent (query rows, keys) pairs: rows [N, M, D], keys and
    values [N, L, D], mask bool [N, M, L] (True = attend). Callers arrange their heads and
    sequences into N however suits their memory layout; the result per row is the same.
    `excluded`: excluded_keys(mask), made once for calls that share a mask (every layer of an
    engine step) instead of `mask`. `shared`: the first keys and values, the same for groups of
    pairs, read once for each group from there (the positions before shared.length of `keys`
    and `values` are then not read)."""
    count = rows.shape[1]
    padding = MIN_QUERY_ROWS - count
    if padding > 0:
        rows = torch.cat([rows, rows.new_zeros(rows.shape[0], padding, rows.shape[2])], dim=1)
    if excluded is None:
        excluded = excluded_keys(mask)
    if shared is None:
        scores = torch.matmul(rows, keys.transpose(-1, -2))
    else:
        # one score per (query, key) either way: the shared keys' columns from one GEMM per head
        prefix = shared.unstacked(torch.matmul(shared.stacked(rows), shared.keys_t), rows.shape[1])
        scores = torch.cat([prefix, torch.matmul(rows, keys[:, shared.length :].transpose(-1, -2))], dim=-1)
    scores = scores * scale
    scores = scores.masked_fill(excluded, torch.finfo(scores.dtype).min)
    probs = torch.softmax(scores, dim=-1, dtype=torch.float32)
    if probs.dtype != values.dtype:
        probs = probs.to(values.dtype)
    # a last chunk shorter than KEY_CHUNK sums like a full one whose extra weights are zero:
    # one GEMM inner block either way
    width = keys.shape[1]
    shared_chunks = shared.length // KEY_CHUNK * KEY_CHUNK if shared is not None else 0
    out = None
    for start in range(0, width, KEY_CHUNK):
        if start < shared_chunks:  # a chunk wholly inside the shared prefix: all its rows in one GEMM
            weights = shared.stacked(probs[..., start : start + KEY_CHUNK])
            part = shared.unstacked(torch.matmul(weights, shared.values[:, start : start + KEY_CHUNK]), probs.shape[1])
        else:
            part = torch.matmul(probs[..., start : start + KEY_CHUNK], values[:, start : start + KEY_CHUNK])
        out = part if out is None else out + part
    return out[:, :count]


def excluded_keys(mask: torch.Tensor) -> torch.Tensor:
    """The keys each query row of attend_rows must not see: ~mask [N, M, L], with the padding
    rows it adds up to MIN_QUERY_ROWS (they see every key; their output is dropped)."""
    padding = MIN_QUERY_ROWS - mask.shape[1]
    if padding > 0:
        mask = torch.cat([mask, mask.new_ones(mask.shape[0], padding, mask.shape[2])], dim=1)
    return ~mask


def _hf_attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    """The Hugging Face AttentionInterface signature; returns [B, Tq, H, D] and no weights."""
    scale = scaling if scaling is not None else query.shape[-1] ** -0.5
    if attention_mask is not None and attention_mask.dtype != torch.bool:
        attention_mask = attention_mask == 0  # an additive float mask: 0 where attended
    out = invariant_attention(query, key, value, attention_mask, scale)
    return out.transpose(1, 2).contiguous(), None


def register() -> str:
    """Register the implementation with transformers (idempotent); returns its name."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    def boolean_mask(*args, **kwargs):
        kwargs["allow_is_causal_skip"] = False  # always a real mask: padding must be seen
        return sdpa_mask(*args, **kwargs)

    AttentionInterface.register(NAME, _hf_attention)
    AttentionMaskInterface.register(NAME, boolean_mask)
    return NAME


def use_invariant_attention(model: torch.nn.Module) -> torch.nn.Module:
    """Switch a loaded Hugging Face model to the invariant attention (the trainer's side)."""
    name = register()
    if hasattr(model, "set_attn_implementation"):
        model.set_attn_implementation(name)
    else:
        model.config._attn_implementation = name
    return model
