"""The decode step's attention over DecodeCache rows in one native call each for the scores and
the values (decode_attention.c), to the bit of the GEMM path it replaces.

The GEMM path (invariant_attention.attend_rows) costs two sgemm calls per sequence and key/value
head, each a few thousand multiply-adds behind a fixed cost: at 16 sequences of a few hundred
keys that fixed cost, not the reading of keys and values, was most of the step's attention.
decode_attention.c computes the same sums in the same order (one fused multiply-add chain per
score and per value chunk, which is how MKL's sgemm sums them at these shapes) and leaves the
softmax to torch, so its bits are the GEMM path's, and so the trainer's.

That "same order" is a fact about this CPU's BLAS, not a law, so it is checked, not assumed:
`library()` compiles the kernel for this CPU (the C compiler, -march=native,
cached by source and CPU under ~/.cache/posttrain/kernels), then `agrees` runs it against
attend_rows on the model's head layout (one query and a verified draft's several, a shared
prefix, a sliding window, widths around the key chunk). Where anything fails (no compiler, a
BLAS that sums otherwise, a non-float32 model) the engine keeps the GEMM path and says why.
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
    lib.decode_scores.argtypes = [_PTR, _PTR, _INT, _INT, _INT, _PTR, _PTR] + [_INT] * 8 + [_FLOAT, _PTR]
    lib.decode_values.argtypes = [_PTR, _PTR, _INT, _INT, _INT, _PTR, _PTR] + [_INT] * 8 + [_PTR]
    lib.decode_cache_write.argtypes = [_PTR, _INT, _INT, _PTR, _INT, _INT, _PTR, _PTR, _PTR] + [_INT] * 3
    lib.decode_cache_write.argtypes += [_PTR, _INT, _INT, _INT, _PTR, _INT, _INT, _INT]
    lib.decode_scores.restype = lib.decode_values.restype = lib.decode_cache_write.restype = None
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
    lib = library()
    pairs, count, dim = rows.shape
    batch, n = limit.shape
    kv = k_t.shape[1]
    if pairs != batch * kv or count != group * n or not rows.is_contiguous() or not limit.is_contiguous():
        raise ValueError(
            f"decode_attention: rows {tuple(rows.shape)} do not match limit {tuple(limit.shape)} and {kv} kv heads"
        )
    if k_t.stride(-1) != 1 or v.stride(-1) != 1 or rows.dtype != torch.float32:
        raise ValueError("decode_attention: float32 rows and caches with unit last stride")
    window = window or 0
    if counts is not None and (counts.dtype != torch.int64 or not counts.is_contiguous() or len(counts) != batch):
        raise ValueError(f"decode_attention: counts must be contiguous int64 of length {batch}")
    counts_ptr = None if counts is None else counts.data_ptr()
    scores = torch.empty(pairs, count, width)
    lib.decode_scores(
        rows.data_ptr(), k_t.data_ptr(), k_t.stride(0), k_t.stride(1), k_t.stride(2), limit.data_ptr(), counts_ptr,
        batch, kv, group, n, dim, width, shared, window, scale, scores.data_ptr(),
    )  # fmt: skip
    probs = torch.softmax(scores, dim=-1, dtype=torch.float32)
    out = torch.empty(pairs, count, dim)
    lib.decode_values(
        probs.data_ptr(), v.data_ptr(), v.stride(0), v.stride(1), v.stride(2), limit.data_ptr(), counts_ptr,
        batch, kv, group, n, dim, width, shared, window, out.data_ptr(),
    )  # fmt: skip
    return out


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
