"""Decoding sequences' keys and values, one contiguous row each, kept from step to step.

The paged cache stores a sequence's keys in blocks scattered over the cache; attention needs
them contiguous. Gathering every decoding sequence's blocks at every step copies the whole
context of the batch in every layer (a gigabyte a step for 128 sequences of 170 tokens). This
mirror keeps each decoding sequence's context in its own row instead:

    k_t[layer]: [rows, kv_heads, head_dim, capacity]   keys, transposed
    v[layer]:   [rows, kv_heads, capacity, head_dim]

Keys are stored transposed because attention multiplies the queries by K^T: a row-major K^T is
the layout the score GEMM reads fastest (a transposed operand costs about a quarter more there),
and each score is still the same length-head_dim dot product.

A sequence is copied in from the paged cache once, when it starts decoding (or after it was
evicted); after that each step appends its one new token in every layer. Rows are compact
(row r < len(seq_ids)), so the batch's keys are the slice k_t[layer][:rows, :, :, :width], a view
that the attention GEMMs read in place. The paged cache stays the source of truth: a sequence
that leaves the decode batch (finished, preempted, a prefill step) is evicted, and a row's
length is checked against the sequence's before it is reused.

Growing the mirror is the expensive part: a new allocation is zero-filled page by page (260 MB
for 16 rows of 352 positions of SmolLM2 took 0.46 s on an AVX-512 EPYC, 560 MB 1.8 s), so it grows by
doubling (within its budget) rather than by what one step needs, and a server reserves its rows
up front (`reserve`). `growths` counts the reallocations, so that a caller timing a step can
tell a one-off allocation from the step's own cost.

With the int8 KV cache (kv_quant.py) the rows hold int8 keys and values, and each position's
scale per head sits beside them (k_scale, v_scale [layers, rows, kv_heads, capacity]), copied
in from the paged cache's and moved with their rows.

Positions past a row's length hold stale but finite values (rows are zero-filled when
allocated), which the attention mask turns into exact zeros, as it does for the gather path's
padding blocks.
"""

from __future__ import annotations

import torch

from posttrain.engine.builtin.kv_quant import SCALE_BYTES


class DecodeCache:
    def __init__(
        self, num_layers: int, num_kv_heads: int, head_dim: int, dtype: torch.dtype, block_size: int, max_bytes: int
    ) -> None:
        self.num_layers, self.num_kv_heads, self.head_dim = num_layers, num_kv_heads, head_dim
        self.dtype, self.block_size, self.max_bytes = dtype, block_size, max_bytes
        self.quantized = dtype == torch.int8
        self.k_t: torch.Tensor | None = None  # [layers, rows, kv_heads, head_dim, capacity]
        self.v: torch.Tensor | None = None  # [layers, rows, kv_heads, capacity, head_dim]
        self.k_scale: torch.Tensor | None = None  # int8: [layers, rows, kv_heads, capacity]
        self.v_scale: torch.Tensor | None = None
        self.seq_ids: list[int] = []  # the sequence in each row
        self.lengths: list[int] = []  # positions of each row already holding the sequence's keys
        self.steps_served = self.steps_declined = 0
        self.growths = 0  # reallocations, each a copy of the mirror into fresh zeroed memory

    def bytes_for(self, rows: int, capacity: int) -> int:
        per_position = self.head_dim * self.dtype.itemsize + (SCALE_BYTES if self.quantized else 0)
        return 2 * self.num_layers * rows * self.num_kv_heads * capacity * per_position

    def prepare(
        self,
        decode: list[tuple[int, list[int], int, int]],
        k_cache: torch.Tensor,
        v_cache: torch.Tensor,
        new_tokens: list[int] | None = None,
        scales: tuple[torch.Tensor, torch.Tensor] | None = None,
    ) -> list[int] | None:
        """Arrange the rows for this step's decoding sequences, given as (seq id, block table,
        context length including the tokens computed this step, the longest it may grow to);
        `new_tokens`: how many tokens each computes this step (1, or more when verifying a
        speculative draft; default 1); `scales`: the int8 paged cache's key and value scales
        [layers, kv, slots]. Returns the row of each, in the given order, or None (and
        holds nothing) when they would not fit in max_bytes: the caller then gathers from the
        paged cache.

        A row is kept when it holds at least the positions before this step's tokens: positions
        past that (a rejected draft's) are overwritten this step or masked out."""
        new_tokens = new_tokens or [1] * len(decode)
        valid = {seq_id: context - new for (seq_id, _, context, _), new in zip(decode, new_tokens)}
        keep = [
            row for row, seq_id in enumerate(self.seq_ids) if seq_id in valid and self.lengths[row] >= valid[seq_id]
        ]
        rows, needed = len(decode), max(context for _, _, context, _ in decode)
        # room for the batch's longest possible sequence at once, when the budget allows:
        # growing step by step would reallocate and copy the whole cache again and again
        if not self.reserve(rows, max(needed, max(final for _, _, _, final in decode))) and not self.reserve(
            rows, needed
        ):
            self.clear()
            self.steps_declined += 1
            return None
        self._compact(keep)
        row_of = {seq_id: row for row, seq_id in enumerate(self.seq_ids)}
        for seq_id, table, _, _ in decode:
            if seq_id not in row_of:
                row_of[seq_id] = len(self.seq_ids)
                self._load(len(self.seq_ids), table, valid[seq_id], k_cache, v_cache, scales)
                self.seq_ids.append(seq_id)
                self.lengths.append(valid[seq_id])
        for seq_id, _, context, _ in decode:
            self.lengths[row_of[seq_id]] = context  # written by the forward pass this step
        self.steps_served += 1
        return [row_of[seq_id] for seq_id, _, _, _ in decode]

    def clear(self) -> None:
        self.seq_ids, self.lengths = [], []

    def reserve(self, rows: int, positions: int) -> bool:
        """Make room for `rows` rows of `positions` positions (rows and capacity never shrink,
        and at least double where they grow, or grow to just what is asked where doubling would
        exceed max_bytes); False, allocating nothing, if even that would exceed max_bytes.
        `prepare` calls it for each step; a server calls it at start (it knows its concurrency)
        so that steps do not pay for growing into it."""
        have_rows, have_capacity = (self.v.shape[1], self.v.shape[3]) if self.v is not None else (0, 0)
        if rows <= have_rows and positions <= have_capacity:
            return True
        new_rows = have_rows if rows <= have_rows else max(rows, 2 * have_rows)
        new_capacity = have_capacity if positions <= have_capacity else max(positions, 2 * have_capacity)
        new_capacity = -(-new_capacity // self.block_size) * self.block_size
        if self.bytes_for(new_rows, new_capacity) > self.max_bytes:
            new_rows, new_capacity = (
                max(rows, have_rows),
                max(-(-positions // self.block_size) * self.block_size, have_capacity),
            )
            if self.bytes_for(new_rows, new_capacity) > self.max_bytes:
                return False
        shape = (self.num_layers, new_rows, self.num_kv_heads, new_capacity, self.head_dim)
        k_t = torch.zeros((*shape[:3], self.head_dim, new_capacity), dtype=self.dtype)
        v = torch.zeros(shape, dtype=self.dtype)
        if self.v is not None and self.seq_ids:
            used, longest = len(self.seq_ids), max(self.lengths)
            k_t[:, :used, :, :, :longest] = self.k_t[:, :used, :, :, :longest]
            v[:, :used, :, :longest] = self.v[:, :used, :, :longest]
        if self.quantized:
            k_scale, v_scale = torch.ones(shape[:4]), torch.ones(shape[:4])
            if self.v is not None and self.seq_ids:
                k_scale[:, :used, :, :longest] = self.k_scale[:, :used, :, :longest]
                v_scale[:, :used, :, :longest] = self.v_scale[:, :used, :, :longest]
            self.k_scale, self.v_scale = k_scale, v_scale
        self.k_t, self.v = k_t, v
        self.growths += 1
        return True

    def _compact(self, keep: list[int]) -> None:
        """Keep only rows `keep` (ascending), moved into rows 0 .. len(keep)-1: each hole below
        the new end is filled from a kept row above it, so only those rows are copied."""
        count, kept = len(keep), set(keep)
        holes = [row for row in range(count) if row not in kept]
        movers = [row for row in keep if row >= count]
        # a copy per moved row: the indexed assignment of all rows at once (index_put_ of a
        # strided slice) took 6-18 ms a row for SmolLM2 at 350 positions, copy_ 1.1-1.4 ms
        for source, target in zip(movers, holes, strict=True):
            length = self.lengths[source]
            self.k_t[:, target, :, :, :length].copy_(self.k_t[:, source, :, :, :length])
            self.v[:, target, :, :length].copy_(self.v[:, source, :, :length])
            if self.quantized:
                self.k_scale[:, target, :, :length].copy_(self.k_scale[:, source, :, :length])
                self.v_scale[:, target, :, :length].copy_(self.v_scale[:, source, :, :length])
        order = [row for row in keep if row < count] + movers
        placed = sorted(zip([row for row in keep if row < count] + holes, order))
        self.seq_ids = [self.seq_ids[source] for _, source in placed]
        self.lengths = [self.lengths[source] for _, source in placed]

    def _load(self, row: int, table: list[int], length: int, k_cache: torch.Tensor, v_cache: torch.Tensor,
              scales: tuple[torch.Tensor, torch.Tensor] | None = None) -> None:  # fmt: skip
        """Copy a sequence's first `length` positions from the paged cache [layers, kv, slots, dim]
        (and, int8, their scales [layers, kv, slots])."""
        if length == 0:
            return
        size = self.block_size
        blocks = torch.tensor(table[: -(-length // size)])
        layers, kv, _, dim = k_cache.shape
        for source, target in ((k_cache, self.k_t.transpose(-1, -2)), (v_cache, self.v)):
            gathered = source.view(layers, kv, -1, size, dim)[:, :, blocks].reshape(layers, kv, -1, dim)
            target[:, row, :, :length] = gathered[:, :, :length]
        if self.quantized:
            for source, target in zip(scales, (self.k_scale, self.v_scale), strict=True):
                gathered = source.view(layers, kv, -1, size)[:, :, blocks].reshape(layers, kv, -1)
                target[:, row, :, :length] = gathered[:, :, :length]
