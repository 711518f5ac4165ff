"""Checked at start-up: does a row's result depend on what else is in the call?

The engine's logprobs equal the trainer's to the bit only if every kernel computes a row the
same way whatever shares the call: the linear layers (oneDNN, or MKL's sgemm where the oneDNN op
is missing) and attention's GEMMs. Those are properties of a BLAS on a CPU, not of posttrain,
and a constant found on one machine does not carry to the next (MKL's sgemm agreed from 12 rows
up on the CPU the engine was written on; on the same Xeon with other shapes it disagrees at 64
rows, and with AVX2 kernels below 48). So the engine probes them once per process, on the
model's own shapes:

    linear      engine(x[:m]) == trainer(x)[:m] for m in ROW_COUNTS: the engine's path (the
                reordered weight, inference mode) against the trainer's (the plain weight, many rows)
    attention   a decode step's output for a query == that query's row in a full causal pass
                over the sequence (invariant_attention), across a key-chunk boundary

`padded_rows(m)` pads a call to the smallest probed count from which the linear layers agree;
with oneDNN that is every count, so nothing is padded. When no count agrees, or attention does
not, `holds` is False and the engine warns once: its logprobs may then differ from the
trainer's by float noise, which `logprob_mismatch_max` reports every step.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field

import torch

from posttrain.engine.builtin import onednn_linear
from posttrain.engine.builtin.invariant_attention import MIN_QUERY_ROWS, SharedPrefix, attend_rows, invariant_attention

ROW_COUNTS = tuple(range(1, 17)) + (20, 24, 32, 48, 64, 96, 128)
REFERENCE_ROWS = 256  # the trainer's side: one call with many rows
PROBE_OUT_FEATURES = 512  # a row's sum runs over in_features; a slice of the outputs keeps it cheap


@dataclass(frozen=True)
class RowInvariance:
    kernel: str  # "onednn" or "mkl"
    agreeing_counts: tuple[int, ...]  # of ROW_COUNTS, those whose rows agree on every probed shape
    min_rows: int | None  # every probed count from here up agrees; None: no such count
    attention_agrees: bool
    seconds: float
    shapes: tuple[tuple[int, int], ...] = field(default=())
    skipped: str | None = None  # why nothing was probed

    @property
    def holds(self) -> bool:
        return self.skipped is None and self.min_rows is not None and self.attention_agrees

    def padded_rows(self, count: int) -> int:
        """The row count to run a call of `count` rows at: itself where rows agree, else the
        next probed count that agrees (the extra rows are thrown away)."""
        if self.min_rows is None or count >= self.min_rows or count in self.agreeing_counts:
            return count
        return min(c for c in self.agreeing_counts if c >= count)

    def describe(self) -> str:
        if self.skipped:
            return self.skipped
        if self.holds:
            return (
                f"{self.kernel} linear layers agree from {self.min_rows} row(s) up, attention agrees "
                f"(probed in {self.seconds * 1000:.0f} ms)"
            )
        problems = []
        if self.min_rows is None:
            failing = [c for c in ROW_COUNTS if c not in self.agreeing_counts]
            problems.append(
                f"{self.kernel} linear layers round a row differently at {failing} rows than in "
                f"a {REFERENCE_ROWS}-row call"
            )
        if not self.attention_agrees:
            problems.append("attention's decode step differs from the full-sequence pass")
        return "; ".join(problems)


def _linear_paths(weight: torch.Tensor):
    """(engine, trainer): a OneDNNLinear holding `weight`, called as the engine calls it
    (inference mode: the reordered weight) and as the trainer does (the plain weight); where
    oneDNN is missing it falls back to F.linear on both sides, as the real layers do."""
    layer = onednn_linear.OneDNNLinear(weight.shape[1], weight.shape[0], bias=False, dtype=weight.dtype)
    with torch.no_grad():
        layer.weight.copy_(weight)

    def engine(x: torch.Tensor) -> torch.Tensor:
        with torch.inference_mode():
            return layer(x)

    def trainer(x: torch.Tensor) -> torch.Tensor:
        with torch.inference_mode(False), torch.no_grad():
            return layer(x)

    return engine, trainer


def agreeing_row_counts(
    engine_fn, trainer_fn, in_features: int, dtype: torch.dtype, counts: tuple[int, ...] = ROW_COUNTS
) -> tuple[int, ...]:
    """The counts m for which engine_fn(x[:m]) equals trainer_fn(x)[:m] bit for bit."""
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(REFERENCE_ROWS, in_features, generator=generator).to(dtype)
    reference = trainer_fn(x)
    return tuple(m for m in counts if torch.equal(engine_fn(x[:m]), reference[:m]))


def attention_agrees(heads: int, kv_heads: int, head_dim: int, dtype: torch.dtype, length: int = 160) -> bool:
    """A decode step's attention (one query, its keys so far, masked padding after them, as
    the engine's DecodeCache lays it out) against the same query in a full causal pass."""
    generator = torch.Generator().manual_seed(1)
    q = torch.randn(1, heads, length, head_dim, generator=generator).to(dtype)
    k = torch.randn(1, kv_heads, length, head_dim, generator=generator).to(dtype)
    v = torch.randn(1, kv_heads, length, head_dim, generator=generator).to(dtype)
    full = invariant_attention(q, k, v, None, head_dim**-0.5)  # [1, H, T, D]
    group, width = heads // kv_heads, length + 16
    keys = torch.cat([k[0], torch.randn(kv_heads, width - length, head_dim, generator=generator).to(dtype)], dim=1)
    values = torch.cat([v[0], torch.randn(kv_heads, width - length, head_dim, generator=generator).to(dtype)], dim=1)
    for position in (0, 3, 127, 128, length - 1):
        rows = q[0, :, position].reshape(kv_heads, group, head_dim)
        mask = (torch.arange(width) <= position).view(1, 1, width).expand(kv_heads, group, width)
        step = attend_rows(rows, keys, values, mask, head_dim**-0.5).reshape(heads, head_dim)
        if not torch.equal(step, full[0, :, position]):
            return False
    return True


PROBED_TAILS = 160  # key counts past a shared prefix probed for the score GEMM


@functools.cache
def prefix_sharing_min_tail(kv_heads: int, group: int, head_dim: int, dtype: torch.dtype) -> int | None:
    """For reading a decode batch's shared prompt prefix once (SharedPrefix): the fewest keys
    past the prefix from which the scores against them, one GEMM of their own, equal the same
    columns of one GEMM over all keys (MKL's sgemm computes a product of fewer than 12 columns
    another way on an AVX-512 EPYC), checked up to PROBED_TAILS; then the whole attention with the
    prefix read once against it read from every sequence's row, for one query per sequence and
    for three (a draft being verified), with the prefix ending inside a key chunk and after one.
    None where even PROBED_TAILS keys do not agree, or the attention differs."""
    generator = torch.Generator().manual_seed(3)
    k_t = torch.randn(2 * kv_heads, head_dim, 512, generator=generator).to(dtype)
    failing = [0]
    for queries in (1, 3):
        rows = torch.randn(2 * kv_heads, max(group * queries, MIN_QUERY_ROWS), head_dim, generator=generator).to(dtype)
        for width in (200, 333):
            full = torch.matmul(rows, k_t[..., :width])
            for tail in range(1, PROBED_TAILS + 1):
                if not torch.equal(torch.matmul(rows, k_t[..., width - tail : width]), full[..., -tail:]):
                    failing.append(tail)
    min_tail = max(failing) + 1
    if min_tail > PROBED_TAILS:
        return None
    sequences, width = 5, 300
    keys = torch.randn(sequences, kv_heads, width, head_dim, generator=generator).to(dtype)
    values = torch.randn(sequences, kv_heads, width, head_dim, generator=generator).to(dtype)
    for length in (100, 150):
        keys[:, :, :length], values[:, :, :length] = keys[:1, :, :length], values[:1, :, :length]
        pairs_k, pairs_v = keys.reshape(-1, width, head_dim), values.reshape(-1, width, head_dim)
        shared = SharedPrefix(keys[0, :, :length].transpose(-1, -2), values[0, :, :length], sequences)
        for queries in (1, 3):
            rows = torch.randn(sequences * kv_heads, group * queries, head_dim, generator=generator).to(dtype)
            ends = torch.randint(length + 1, width + 1, (sequences,), generator=generator)
            mask = torch.arange(width)[None, :] < ends[:, None]
            mask = mask.view(sequences, 1, 1, width).expand(sequences, kv_heads, group * queries, width)
            mask = mask.reshape(-1, group * queries, width)
            plain = attend_rows(rows, pairs_k, pairs_v, mask, head_dim**-0.5)
            if not torch.equal(attend_rows(rows, pairs_k, pairs_v, mask, head_dim**-0.5, shared=shared), plain):
                return None
    return min_tail


@functools.cache
def probe(
    linear_shapes: tuple[tuple[int, int], ...],
    heads: int,
    kv_heads: int,
    head_dim: int,
    dtype: torch.dtype = torch.float32,
) -> RowInvariance:
    """Probe the given (in_features, out_features) shapes and the attention layout, once per
    process and arguments."""
    kernel = "onednn" if onednn_linear.AVAILABLE else "mkl"
    if dtype != torch.float32:
        # the trainer computes in fp32: an engine in another precision rounds differently by
        # design, and probing bf16 where it is emulated would take seconds
        return RowInvariance(
            kernel, ROW_COUNTS, 1, True, 0.0, skipped=f"{dtype} engine weights round differently from the fp32 trainer"
        )
    started = time.perf_counter()
    generator = torch.Generator().manual_seed(2)
    agreeing = set(ROW_COUNTS)
    probed = tuple(sorted({(k, min(n, PROBE_OUT_FEATURES)) for k, n in linear_shapes}))
    for in_features, out_features in probed:
        weight = torch.randn(out_features, in_features, generator=generator).to(dtype)
        agreeing &= set(agreeing_row_counts(*_linear_paths(weight), in_features, dtype))
    counts = tuple(sorted(agreeing))
    min_rows = next((m for m in ROW_COUNTS if all(c in agreeing for c in ROW_COUNTS if c >= m)), None)
    with torch.inference_mode():
        attention = attention_agrees(heads, kv_heads, head_dim, dtype)
    return RowInvariance(kernel, counts, min_rows, attention, time.perf_counter() - started, probed)


def probe_model(model: torch.nn.Module) -> RowInvariance:
    config = model.config
    shapes = tuple(sorted({(m.in_features, m.out_features) for m in model.modules() if isinstance(m, torch.nn.Linear)}))
    heads = config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    return probe(shapes, heads, config.num_key_value_heads, head_dim, next(model.parameters()).dtype)
