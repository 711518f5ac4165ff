"""The decode step's attention over DecodeCache rows in one native call each for the scores and
the values (decode_attention.c), to the bit of the GEMM path it replaces.

The GEMM path (invariant_attention.attend_rows) costs two sgemm calls per sequence and key/value
head, each a few thousand multiply-adds behind a fixed cost: at 16 sequences of a few hundred
keys that fixed cost, not the reading of keys and values, was most of the step's attention.
decode_attention.c computes the same sums in the same order (one fused multiply-add chain per
score and per value chunk, which is how MKL's sgemm sums them at these shapes) and leaves the
softmax to torch, so its bits are the GEMM path's, and so the trainer's. The engine calls it on
the step's own token rows (decode_attention_tokens: no gather of the queries into the pairs
layout, no scatter of the output back), after rope_cache_write has rotated the step's queries
and keys and written its keys and values to the paged cache and the DecodeCache in one pass
(a decode step of 4 sequences: ~30 small torch ops a layer fewer).

That "same order" is a fact about this CPU's BLAS, not a law, so it is checked, not assumed:
`library()` compiles the kernel for this CPU (the C compiler, -march=native,
cached by source and CPU under ~/.cache/posttrain/kernels), then `agrees` runs it against
attend_rows on the model's head layout (one query and a verified draft's several, a shared
prefix, a sliding window, widths around the key chunk). Where anything fails (no compiler, a
BLAS that sums otherwise, a non-float32 model) the engine keeps the GEMM path and says why.

The int8 KV cache (kv_quant.py) uses the same kernel over int8 keys and values with their
scales (decode_scores_q8, decode_values_q8: each key's scale times the softmax's on its score,
each value's on its weight) and writes each step's keys and values quantized in one call a
layer (quantize_write, kv_quant.quantize's arithmetic to the bit). It makes no bit promise
against the GEMM path: the tests hold it to float rounding of the dequantized values.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import logging
import os
import platform
import shutil
import subprocess
import tempfile
from pathlib import Path

import torch

from posttrain.engine.builtin.invariant_attention import SharedPrefix, attend_rows

log = logging.getLogger(__name__)

SOURCE = Path(__file__).with_name("decode_attention.c")
# below this many keys MKL's sgemm sums a score another way (row_invariance.prefix_sharing_min_tail)
MIN_WIDTH = 12
FLAGS = ("-O3", "-march=native", "-ffp-contract=off", "-shared", "-fPIC")
_INT, _PTR, _FLOAT = ctypes.c_int64, ctypes.c_void_p, ctypes.c_float


class KernelUnavailableError(RuntimeError):
    """The native kernel cannot be built or does not give the GEMM path's bits here."""


def cache_dir() -> Path:
    return Path(os.environ.get("POSTTRAIN_KERNEL_CACHE") or Path.home() / ".cache" / "posttrain" / "kernels")


def _cpu_flags() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return line
    except OSError:
        pass
    return platform.processor()


@functools.cache
def library() -> ctypes.CDLL:
    """The compiled kernel for this CPU, built once per source, compiler and CPU."""
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise KernelUnavailableError("no C compiler (cc or gcc) on PATH")
    try:
        version = subprocess.run([compiler, "--version"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise KernelUnavailableError(f"{compiler} --version failed: {exc}") from exc
    key = hashlib.sha256("\n".join([SOURCE.read_text(), " ".join(FLAGS), version, _cpu_flags()]).encode()).hexdigest()
    name = f"decode_attention-{key[:16]}.so"
    try:
        target = _built(compiler, cache_dir(), name)
    except OSError:  # a cache directory that cannot be written: a private one, for this process
        target = _built(compiler, Path(tempfile.mkdtemp(prefix="posttrain-kernels-")), name)
    try:
        lib = ctypes.CDLL(str(target))
    except OSError as exc:
        raise KernelUnavailableError(f"loading {target} failed: {exc}") from exc
    lib.decode_scores.argtypes = [_PTR, _PTR, _INT, _INT, _PTR, _INT, _INT, _INT, _PTR, _PTR]
    lib.decode_scores.argtypes += [_INT] * 8 + [_FLOAT, _PTR]
    lib.decode_values.argtypes = [_PTR, _PTR, _INT, _INT, _INT, _PTR, _PTR] + [_INT] * 8 + [_PTR, _PTR, _INT, _INT]
    lib.decode_cache_write.argtypes = [_PTR, _INT, _INT, _PTR, _INT, _INT, _PTR, _PTR, _PTR] + [_INT] * 3
    lib.decode_cache_write.argtypes += [_PTR, _INT, _INT, _INT, _PTR, _INT, _INT, _INT]
    lib.rope_cache_write.argtypes = [_PTR] + [_INT] * 5 + [_PTR] * 4 + [_PTR, _INT, _INT] * 2
    lib.rope_cache_write.argtypes += [_PTR, _PTR] + [_PTR, _INT, _INT, _INT] * 2
    lib.decode_scores_q8.argtypes = lib.decode_scores.argtypes + [_PTR, _INT, _INT]
    lib.decode_values_q8.argtypes = lib.decode_values.argtypes + [_PTR, _INT, _INT]
    lib.quantize_write.argtypes = [_PTR] + [_INT] * 5 + [_PTR, _PTR, _INT, _INT, _PTR, _INT]
    lib.quantize_write.argtypes += [_PTR, _PTR, _PTR] + [_INT] * 4 + [_PTR, _INT, _INT]
    functions = (lib.decode_scores, lib.decode_values, lib.decode_scores_q8, lib.decode_values_q8)
    for function in (*functions, lib.decode_cache_write, lib.rope_cache_write, lib.quantize_write):
        function.restype = None
    return lib


def write_decode_cache(
    k: torch.Tensor,
    v: torch.Tensor,
    tokens: torch.Tensor,
    rows: torch.Tensor,
    positions: torch.Tensor,
    k_t: torch.Tensor,
    v_cache: torch.Tensor,
) -> None:
    """k_t[rows, :, :, positions] = k[:, tokens].transpose(0, 1) and the same for v into v_cache
    [rows, kv, capacity, D], in one call: k and v [kv, step tokens, D] with unit last stride;
    tokens, rows, positions int64, one entry per token written."""
    if k.stride(-1) != 1 or v.stride(-1) != 1 or v_cache.stride(-1) != 1 or k.dtype != torch.float32:
        raise ValueError("write_decode_cache: float32 keys and values with unit last stride")
    if not (len(tokens) == len(rows) == len(positions)) or not all(
        t.dtype == torch.int64 and t.is_contiguous() for t in (tokens, rows, positions)
    ):
        raise ValueError("write_decode_cache: tokens, rows and positions are contiguous int64 of one length")
    kv, _, dim = k.shape
    library().decode_cache_write(
        k.data_ptr(), k.stride(0), k.stride(1), v.data_ptr(), v.stride(0), v.stride(1),
        tokens.data_ptr(), rows.data_ptr(), positions.data_ptr(), len(tokens), kv, dim,
        k_t.data_ptr(), k_t.stride(0), k_t.stride(1), k_t.stride(2),
        v_cache.data_ptr(), v_cache.stride(0), v_cache.stride(1), v_cache.stride(2),
    )  # fmt: skip


def quantize_write(
    x: torch.Tensor,
    slots: torch.Tensor,
    cache: torch.Tensor,
    scales: torch.Tensor,
    destination: tuple | None = None,
) -> None:
    """kv_quant.quantize of one layer's keys or values x [kv, tokens, D] (float32, unit last
    stride), written in one call to the int8 paged cache layer (cache [kv, slots, D], scales [kv,
    slots]) at `slots`, and with destination = (rows, positions, row_cache, row_scales, keys) also
    to the DecodeCache rows (rows[i] < 0: token i has none): row_cache [rows, kv, D, capacity]
    where keys (transposed), else [rows, kv, capacity, D]."""
    kv, tokens, dim = x.shape
    if x.dtype != torch.float32 or x.stride(-1) != 1 or cache.dtype != torch.int8 or cache.stride(-1) != 1:
        raise ValueError("quantize_write: float32 x and an int8 cache, each with unit last stride")
    if slots.dtype != torch.int64 or not slots.is_contiguous() or len(slots) != tokens:
        raise ValueError("quantize_write: contiguous int64 slots, one a token")
    if scales.stride(-1) != 1 or scales.dtype != torch.float32:
        raise ValueError("quantize_write: float32 scales with unit last stride")
    rows = positions = None
    row_cache, row_scales, keys = torch.empty(1, 1, 1, 1, dtype=torch.int8), torch.empty(1, 1, 1), False
    if destination is not None:
        rows, positions, row_cache, row_scales, keys = destination
        if len(rows) != tokens or len(positions) != tokens or not (rows.is_contiguous() and positions.is_contiguous()):
            raise ValueError("quantize_write: a destination row and position a token")
    # keys' rows are [rows, kv, D, capacity]: a position is the last axis, an element the one before
    r_pos, r_d = (row_cache.stride(3), row_cache.stride(2)) if keys else (row_cache.stride(2), row_cache.stride(3))
    library().quantize_write(
        x.data_ptr(), x.stride(0), x.stride(1), tokens, kv, dim, slots.data_ptr(), cache.data_ptr(),
        cache.stride(0), cache.stride(1), scales.data_ptr(), scales.stride(0),
        None if rows is None else rows.data_ptr(), None if positions is None else positions.data_ptr(),
        row_cache.data_ptr(), row_cache.stride(0), row_cache.stride(1), r_pos, r_d,
        row_scales.data_ptr(), row_scales.stride(0), row_scales.stride(1),
    )  # fmt: skip


def _built(compiler: str, directory: Path, name: str) -> Path:
    """The library `name` in `directory`, compiled there unless it already is."""
    target = directory / name
    if target.exists():
        return target
    directory.mkdir(parents=True, exist_ok=True)
    # built beside the target and renamed into place: processes building at once never load a
    # half-written library
    with tempfile.TemporaryDirectory(dir=directory) as scratch:
        built = Path(scratch) / name
        result = subprocess.run(
            [compiler, *FLAGS, str(SOURCE), "-o", str(built), "-lm"], capture_output=True, text=True
        )
        if result.returncode != 0:
            raise KernelUnavailableError(f"compiling {SOURCE.name} failed: {result.stderr.strip()[-500:]}")
        os.replace(built, target)
    return target


def decode_attention(
    rows: torch.Tensor,
    k_t: torch.Tensor,
    v: torch.Tensor,
    limit: torch.Tensor,
    group: int,
    width: int,
    scale: float,
    shared: int = 0,
    window: int | None = None,
    counts: torch.Tensor | None = None,
) -> torch.Tensor:
    """attend_rows' result for the DecodeCache layout. rows [batch * kv, group * n, D] (row
    g * n + t: head g, query t), contiguous; k_t [>= batch, kv, D, capacity] and v [>= batch,
    kv, capacity, D], each sequence's row; limit int64 [batch, n]: query t of sequence b sees
    keys up to limit[b, t] (and, with a window, the last `window` of them); the first `shared`
    positions are the same in every row; counts int64 [batch]: sequence b's real queries (the
    rest pad it to n and are not computed: their rows of the result are undefined). Returns
    [batch * kv, group * n, D]."""
    pairs, count, dim = rows.shape
    batch, n = limit.shape
    kv = k_t.shape[1]
    if pairs != batch * kv or count != group * n or not rows.is_contiguous():
        raise ValueError(
            f"decode_attention: rows {tuple(rows.shape)} do not match limit {tuple(limit.shape)} and {kv} kv heads"
        )
    # row (b, h, g, t) of the pairs layout: b * kv * R + t rows in, then (h * group + g) * n
    index = (torch.arange(batch)[:, None] * (kv * count) + torch.arange(n)[None, :]).contiguous()
    out = torch.empty_like(rows)
    _attend(rows, index, dim, n * dim, k_t, v, limit, group, width, scale, shared, window, counts, out, dim, n * dim)
    return out


def decode_attention_tokens(
    q: torch.Tensor,
    query_index: torch.Tensor,
    k_t: torch.Tensor,
    v: torch.Tensor,
    limit: torch.Tensor,
    group: int,
    width: int,
    scale: float,
    shared: int,
    window: int | None,
    counts: torch.Tensor | None,
    out: torch.Tensor,
    scales: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> None:
    """decode_attention on the step's token rows, in place: q and out [tokens, heads, D] (unit
    stride over heads' dims, heads adjacent), query t of sequence b being token query_index[b, t]
    (int64 [batch, n]); each real query's heads of `out` are written, the other rows left as
    they were. The engine's decode layer: no gather into the pairs layout and no scatter back.
    scales: int8 k_t and v, each key's and value's float32 scale [>= batch, kv, capacity]
    (kv_quant.py), applied as they are read."""
    if q.stride(-1) != 1 or out.stride(-1) != 1 or q.dim() != 3 or out.shape != q.shape:
        raise ValueError("decode_attention_tokens: q and out [tokens, heads, D] with unit last stride")
    if query_index.shape != limit.shape:
        raise ValueError(f"decode_attention_tokens: query_index {tuple(query_index.shape)} is not limit's shape")
    _attend(q, query_index, q.stride(0), q.stride(1), k_t, v, limit, group, width, scale, shared, window, counts,
            out, out.stride(0), out.stride(1), scales)  # fmt: skip


def _attend(
    q, qidx, q_tok, q_head, k_t, v, limit, group, width, scale, shared, window, counts, out, o_tok, o_head, scales=None
):
    lib = library()
    batch, n = limit.shape
    kv, dim = k_t.shape[1], k_t.shape[2]
    if not limit.is_contiguous() or not qidx.is_contiguous() or limit.dtype != torch.int64 or qidx.dtype != torch.int64:
        raise ValueError("decode_attention: limit and the query index must be contiguous int64")
    if k_t.stride(-1) != 1 or v.stride(-1) != 1 or q.dtype != torch.float32 or out.dtype != torch.float32:
        raise ValueError("decode_attention: float32 rows and caches with unit last stride")
    cache_dtype = torch.float32 if scales is None else torch.int8
    if k_t.dtype != cache_dtype or v.dtype != cache_dtype:
        raise ValueError(f"decode_attention: {k_t.dtype} caches; float32 ones without scales, int8 ones with them")
    q8 = () if scales is None else _scale_args(scales)
    if counts is not None and (counts.dtype != torch.int64 or not counts.is_contiguous() or len(counts) != batch):
        raise ValueError(f"decode_attention: counts must be contiguous int64 of length {batch}")
    window = window or 0
    counts_ptr = None if counts is None else counts.data_ptr()
    pairs, count = batch * kv, group * n
    scores = torch.empty(pairs, count, width)
    (lib.decode_scores_q8 if q8 else lib.decode_scores)(
        q.data_ptr(), qidx.data_ptr(), q_tok, q_head, k_t.data_ptr(), k_t.stride(0), k_t.stride(1), k_t.stride(2),
        limit.data_ptr(), counts_ptr, batch, kv, group, n, dim, width, shared, window, scale, scores.data_ptr(),
        *q8[:3],
    )  # fmt: skip
    probs = torch.softmax(scores, dim=-1, dtype=torch.float32)
    (lib.decode_values_q8 if q8 else lib.decode_values)(
        probs.data_ptr(), v.data_ptr(), v.stride(0), v.stride(1), v.stride(2), limit.data_ptr(), counts_ptr,
        batch, kv, group, n, dim, width, shared, window, out.data_ptr(), qidx.data_ptr(), o_tok, o_head, *q8[3:],
    )  # fmt: skip


def _scale_args(scales: tuple[torch.Tensor, torch.Tensor]) -> tuple:
    """(pointer, row stride, head stride) of the key scales, then of the value scales."""
    args = ()
    for s in scales:
        if s.dtype != torch.float32 or s.stride(-1) != 1:
            raise ValueError("decode_attention: float32 scales with unit last stride")
        args += (s.data_ptr(), s.stride(0), s.stride(1))
    return args


def rope_cache_write(
    qkv: torch.Tensor,
    cos: torch.Tensor,
    signed_sin: torch.Tensor,
    heads: int,
    slots: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    destination: tuple | None = None,
) -> torch.Tensor:
    """The step's queries rotated, [tokens, heads, D]; its keys rotated and its values written
    to the paged cache layer (k_cache, v_cache [kv, slots, D]) at `slots`, and with
    destination = (rows, positions, k_t, v_t) also to the DecodeCache rows (rows[i] < 0: token
    i has none). qkv [tokens, (heads + 2 kv) * D], unit last stride: the stacked projection;
    cos, signed_sin [tokens, D] contiguous (model_runner._rotation's)."""
    tokens, dim = cos.shape
    kv = k_cache.shape[0]
    if dim % 2 or qkv.shape != (tokens, (heads + 2 * kv) * dim) or qkv.stride(-1) != 1:
        raise ValueError(f"rope_cache_write: qkv {tuple(qkv.shape)} is not {tokens} tokens of {heads}+2x{kv} heads")
    if not (cos.is_contiguous() and signed_sin.is_contiguous() and slots.is_contiguous()) or len(slots) != tokens:
        raise ValueError("rope_cache_write: cos, sin and slots contiguous, one slot a token")
    if slots.dtype != torch.int64 or (destination is not None and destination[0].dtype != torch.int64):
        raise ValueError("rope_cache_write: slots, rows and positions are int64")
    if any(t.dtype != torch.float32 or t.stride(-1) != 1 for t in (qkv, cos, signed_sin, k_cache, v_cache)):
        raise ValueError("rope_cache_write: float32 tensors with unit last stride")
    q = torch.empty(tokens, heads, dim)
    if destination is None:
        rows = positions = None
        k_t = v_t = torch.empty(1, 1, 1, 1)
    else:
        rows, positions, k_t, v_t = destination
        if len(rows) != tokens or len(positions) != tokens or not (rows.is_contiguous() and positions.is_contiguous()):
            raise ValueError("rope_cache_write: a destination row and position a token")
    library().rope_cache_write(
        qkv.data_ptr(), qkv.stride(0), tokens, heads, kv, dim, cos.data_ptr(), signed_sin.data_ptr(),
        slots.data_ptr(), q.data_ptr(), k_cache.data_ptr(), k_cache.stride(0), k_cache.stride(1),
        v_cache.data_ptr(), v_cache.stride(0), v_cache.stride(1),
        None if rows is None else rows.data_ptr(), None if positions is None else positions.data_ptr(),
        k_t.data_ptr(), k_t.stride(0), k_t.stride(1), k_t.stride(2), v_t.data_ptr(), v_t.stride(0), v_t.stride(1),
        v_t.stride(2),
    )  # fmt: skip
    return q


@functools.cache
def agrees(kv_heads: int, group: int, head_dim: int, dtype: torch.dtype) -> str | None:
    """None where decode_attention gives attend_rows' bits for this head layout on this CPU,
    else why not (the engine then keeps attend_rows)."""
    if dtype != torch.float32:
        return f"the native decode attention is float32 only, the model is {dtype}"
    try:
        library()
    except KernelUnavailableError as exc:
        return str(exc)
    generator = torch.Generator().manual_seed(4)
    batch, capacity, scale = 3, 336, head_dim**-0.5
    k_t = torch.randn(batch + 1, kv_heads, head_dim, capacity, generator=generator)
    v = torch.randn(batch + 1, kv_heads, capacity, head_dim, generator=generator)
    for shared in (0, 150):
        k_t[1:, :, :, :shared], v[1:, :, :shared] = k_t[:1, :, :, :shared], v[:1, :, :shared]
        for n in (1, 3):
            for width in (20, 128, 129, 300, 333):
                if shared and width - shared < 12:  # the GEMM path's own condition for sharing
                    continue
                ends = torch.randint(max(width - 20, n, shared + 1), width + 1, (batch,), generator=generator)
                ends[0] = width
                limit = (ends[:, None] - n + torch.arange(n)[None, :]).contiguous()
                rows = torch.randn(batch * kv_heads, group * n, head_dim, generator=generator)
                for window in (None, 100):
                    counts = torch.tensor([n, 1, max(n - 1, 1)]) if n > 1 else None  # drafts of other lengths
                    if not _same(rows, k_t, v, limit, group, width, scale, shared, window, counts):
                        return (
                            f"the native decode attention differs from the GEMM path here "
                            f"(kv={kv_heads}, group={group}, dim={head_dim}, n={n}, width={width}, "
                            f"shared={shared}, window={window})"
                        )
    # a prefill chunk: one sequence, many causal queries (the engine's prefill path)
    n, width = 70, 260
    limit = (width - n + torch.arange(n))[None].contiguous()
    rows = torch.randn(kv_heads, group * n, head_dim, generator=generator)
    for window in (None, 100):
        if not _same(rows, k_t[:1, :, :, :width], v[:1, :, :width], limit, group, width, scale, 0, window):
            return f"the native attention differs from the GEMM path on a prefill chunk (n={n}, window={window})"
    return None


def gemm_path(rows, k_t, v, limit, group, width, scale, shared=0, window=None) -> torch.Tensor:
    """What the engine computes without the kernel: attend_rows over the same DecodeCache rows,
    with the mask its plan builds (model_runner._AttentionPlan) and the shared prefix read once."""
    batch, n = limit.shape
    kv, dim = k_t.shape[1], k_t.shape[2]
    keys = k_t[:batch, :, :, :width].reshape(batch * kv, dim, width).transpose(-1, -2)
    values = v[:batch, :, :width].reshape(batch * kv, width, dim)
    positions = torch.arange(width)[None, None, :]
    mask = positions <= limit[:, :, None]
    if window:
        mask = mask & (positions > limit[:, :, None] - window)
    mask = mask.view(batch, 1, 1, n, width).expand(batch, kv, group, n, width).reshape(batch * kv, group * n, width)
    prefix = SharedPrefix(k_t[0, :, :, :shared], v[0, :, :shared], batch) if shared else None
    return attend_rows(rows, keys, values, mask, scale, shared=prefix)


def _same(rows, k_t, v, limit, group, width, scale, shared, window, counts=None) -> bool:
    """The kernel against the GEMM path on every real query's rows."""
    expected = gemm_path(rows, k_t, v, limit, group, width, scale, shared, window)
    got = decode_attention(rows, k_t, v, limit, group, width, scale, shared, window, counts)
    if counts is not None:
        valid = real_rows(counts, k_t.shape[1], group, limit.shape[1])
        got, expected = got[valid], expected[valid]
    return torch.equal(got, expected)


def real_rows(counts: torch.Tensor, kv: int, group: int, n: int) -> torch.Tensor:
    """bool [batch * kv, group * n]: the rows of real queries (t < counts[b]) in the kernel's layout."""
    real = torch.arange(n)[None, :] < counts[:, None]  # [batch, n]
    return real.view(-1, 1, 1, n).expand(-1, kv, group, n).reshape(-1, group * n)
