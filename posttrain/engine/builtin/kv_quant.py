"""The int8 KV cache: keys and values stored as int8 with one float32 scale per token and head.

    scale = max |x| over the head's D values / 127        (a positive floor: an all-zero row)
    q     = round(x / scale), in [-127, 127]                x ~= q * scale

A token's head of SmolLM2 (D = 64) takes 64 + 4 bytes instead of 256: 0.27 of float32's, so the
same memory holds 3.76x the tokens. Attention reads q and applies the scale as it reads
(decode_attention.c's *_q8 functions; dequantize on the torch paths), so the score of key j is
scale_j * (query . q_j) and the output sum_j p_j scale_j v_j. It is not lossless: the engine's
logprobs differ from the trainer's exact ones, which `logprob_mismatch_max` reports and
truncated importance sampling ([algorithm] tis_cap) corrects.
"""

from __future__ import annotations

import torch

from posttrain.errors import PosttrainError

KV_CACHE_DTYPES = ("auto", "fp32", "int8")  # auto: the model's own dtype (float32 here), as before
SCALE_BYTES = 4  # one float32 scale per token and head
# the smallest scale: an all-zero head dequantizes to zeros and never multiplies -inf by 0
_FLOOR = torch.finfo(torch.float32).tiny


def is_int8(kv_cache_dtype: str) -> bool:
    """Whether the name asks for the int8 cache; one-line error naming the key for any other name."""
    if kv_cache_dtype not in KV_CACHE_DTYPES:
        raise PosttrainError(
            f"[engine] kv_cache_dtype = {kv_cache_dtype!r} is not one of {', '.join(map(repr, KV_CACHE_DTYPES))}"
        )
    return kv_cache_dtype == "int8"


def quantize(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(int8 values [..., D], float32 scales [...]) of float x [..., D], per row of D."""
    scale = (x.abs().amax(-1) / 127).clamp_min(_FLOOR)
    return torch.round(x / scale[..., None]).clamp_(-127, 127).to(torch.int8), scale.float()


def dequantize(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """float32 [..., D] of int8 q [..., D] and its scales [...]."""
    return q.float() * scale[..., None]


def key_rotation(head_dim: int, seed: int = 0) -> torch.Tensor:
    """A fixed random orthogonal [D, D] matrix R: a Hadamard matrix with random column signs,
    scaled by 1/sqrt(D), where D is a power of two (else the Q of a seeded Gaussian's QR).
    Keys stored as k R and queries read as q R give the same scores, q R (k R)^T = q k^T, while
    R spreads a few large channels over all D, so one scale per head wastes fewer of its steps."""
    generator = torch.Generator().manual_seed(seed)
    if head_dim & (head_dim - 1) == 0:
        hadamard = torch.ones(1, 1)
        while hadamard.shape[0] < head_dim:
            hadamard = torch.cat((torch.cat((hadamard, hadamard), 1), torch.cat((hadamard, -hadamard), 1)), 0)
        signs = torch.randint(0, 2, (head_dim,), generator=generator) * 2 - 1
        return hadamard * signs / head_dim**0.5
    q, _ = torch.linalg.qr(torch.randn(head_dim, head_dim, generator=generator, dtype=torch.float64))
    return q.float()


def bytes_per_token(kv_cache_dtype: str, num_layers: int, num_kv_heads: int, head_dim: int) -> int:
    """The KV cache's bytes for one token across all layers: keys and values, with their scales."""
    per_head = head_dim + SCALE_BYTES if is_int8(kv_cache_dtype) else 4 * head_dim
    return 2 * num_layers * num_kv_heads * per_head
