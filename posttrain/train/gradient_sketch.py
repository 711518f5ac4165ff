"""Gradient conflict at a hundred domains: count sketches of each domain's gradient, per module
group, instead of full copies (540 MB each for SmolLM2).

A count sketch maps coordinate i of a module group to bucket h(i) of `width` with sign s(i):

    S(g)[b] = sum_{i : h(i) = b} s(i) * g_i

It preserves inner products in expectation, E<S(a), S(b)> = <a, b>, with variance
(||a||^2 ||b||^2 + <a, b>^2) / width, so a cosine's error is about 1/sqrt(width): 0.011 at the
default width of 8192 per group. h and s come from a fixed integer hash of the parameter's name
and the coordinate's index, so every domain's gradient is sketched with the same map and the
sketch of one domain costs a few integer operations per parameter, never a random matrix.

`sketch_gradient` sketches one domain's gradient (then the full gradient can go); `sketch_cosines`
turns the sketches of any number of domains into the structure `gradient_cosines` returns, with
the per-group Gram matrices of all domains at once (100 domains: a few matrix products).
"""

from __future__ import annotations

import math
import zlib

import torch

from posttrain.train.gradient_conflict import cosine, module_group

DEFAULT_WIDTH = 8192
_MASK = 0xFFFFFFFF
_CHUNK = 1 << 22  # coordinates hashed at a time: bounds the int64 temporaries to 32 MB


def _mix(x: torch.Tensor) -> torch.Tensor:
    """murmur3's 32-bit finaliser on int64 values below 2**32 (the products wrap modulo 2**64,
    and only their low 32 bits are kept)."""
    x = x ^ (x >> 16)
    x = (x * 0x85EBCA6B) & _MASK
    x = x ^ (x >> 13)
    x = (x * 0xC2B2AE35) & _MASK
    return x ^ (x >> 16)


def sketch_tensor(values: torch.Tensor, salt: int, width: int) -> torch.Tensor:
    """The count sketch [width] (float64) of a flattened tensor, its map seeded by `salt`."""
    flat = values.detach().reshape(-1).to(torch.float64)
    sketch = torch.zeros(width, dtype=torch.float64)
    for start in range(0, flat.numel(), _CHUNK):
        chunk = flat[start : start + _CHUNK]
        hashed = _mix((torch.arange(start, start + chunk.numel(), dtype=torch.int64) + salt) & _MASK)
        signs = 1.0 - 2.0 * ((hashed >> 31) & 1).to(torch.float64)
        sketch.index_add_(0, hashed & (width - 1), chunk * signs)
    return sketch


def sketch_gradient(gradient: dict[str, torch.Tensor], width: int = DEFAULT_WIDTH) -> dict[str, torch.Tensor]:
    """One domain's gradient (parameter name -> tensor) -> module group -> its count sketch."""
    if width < 1 or width & (width - 1):
        raise ValueError(f"the sketch width must be a power of two, got {width}")
    sketches: dict[str, torch.Tensor] = {}
    for name in sorted(gradient):
        group = module_group(name)
        part = sketch_tensor(gradient[name], zlib.crc32(name.encode()), width)
        sketches[group] = sketches[group] + part if group in sketches else part
    return sketches


def sketch_cosines(sketches: dict[str, dict[str, torch.Tensor]]) -> dict:
    """`gradient_cosines`' structure from the domains' sketches (domain -> group -> sketch, the
    same groups for every domain): cosines over the whole model and per module group, norms."""
    domains = sorted(sketches)
    if any("|" in domain for domain in domains):
        raise ValueError(f"domain names may not contain '|' (the pair separator): {domains}")
    groups = sorted(sketches[domains[0]]) if domains else []
    for domain in domains:
        if sorted(sketches[domain]) != groups:
            raise ValueError(f"domain {domain!r} has sketches of other module groups than {domains[0]!r}")
    # gram[group][i, j] = <S(g_i), S(g_j)> restricted to the group
    gram = {group: (rows := torch.stack([sketches[d][group] for d in domains])) @ rows.T for group in groups}
    total = sum(gram.values()) if groups else torch.zeros(len(domains), len(domains), dtype=torch.float64)
    pairs = [(i, j) for i in range(len(domains)) for j in range(i + 1, len(domains))]

    def cosines(matrix: torch.Tensor) -> dict[str, float]:
        values = matrix.tolist()
        return {
            f"{domains[i]}|{domains[j]}": cosine(values[i][j], max(values[i][i], 0.0), max(values[j][j], 0.0))
            for i, j in pairs
        }

    return {
        "overall": cosines(total),
        "groups": {group: cosines(gram[group]) for group in groups},
        "norms": {d: math.sqrt(max(float(total[i, i]), 0.0)) for i, d in enumerate(domains)},
        "group_norms": {
            group: {d: math.sqrt(max(float(gram[group][i, i]), 0.0)) for i, d in enumerate(domains)} for group in groups
        },
    }


def most_conflicting_pairs(cosines: dict, count: int = 10) -> list[dict]:
    """The `count` pairs with the most negative overall cosine, most negative first."""
    ranked = sorted(cosines["overall"].items(), key=lambda item: (item[1], item[0]))[:count]
    return [{"pair": pair, "cosine": value} for pair, value in ranked]
