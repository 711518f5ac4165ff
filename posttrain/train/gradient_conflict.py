"""Gradient conflict between domains: the cosine between two domains' loss gradients, over the
whole model and per module group.

A cosine near 0 over the whole model can hide a conflict in a few modules: one layer's MLP
pulled in opposite directions weighs little beside the embeddings. Hence the per-group cosines
and `conflict_summary`, which names the groups below a threshold.
"""

from __future__ import annotations

import math
import re
from itertools import combinations

import torch

_LAYER_PART = re.compile(r"(?:^|\.)layers\.(\d+)\.(self_attn|mlp|input_layernorm|post_attention_layernorm)\.")
_LAYER_GROUP = {
    "self_attn": "attention",
    "mlp": "mlp",
    "input_layernorm": "norm",
    "post_attention_layernorm": "norm",
}


def module_group(param_name: str) -> str:
    """The module group of a Llama-shaped Hugging Face model's parameter: `embeddings`,
    `layer{i}.attention`, `layer{i}.mlp`, `layer{i}.norm`, `final_norm`, `head`, else `other`.
    With tied embeddings there is no separate lm_head parameter: `embeddings` is the head too."""
    layer = _LAYER_PART.search(param_name)
    if layer:
        return f"layer{layer.group(1)}.{_LAYER_GROUP[layer.group(2)]}"
    if "embed_tokens." in param_name:
        return "embeddings"
    if param_name.startswith("lm_head.") or ".lm_head." in param_name:
        return "head"
    if re.search(r"(?:^|\.)model\.norm\.", param_name):
        return "final_norm"
    return "other"


def gradient_cosines(grads: dict[str, dict[str, torch.Tensor]]) -> dict:
    """Cosines between every pair of domains' gradients (`grads`: domain -> parameter name ->
    gradient, the same names for every domain):

        cos(g_a, g_b) = <g_a, g_b> / (||g_a|| * ||g_b||),   defined as 0.0 when either norm is 0

    over the flattened full gradients and over each module group's parameters alone. Returns
    {"overall": {"a|b": cos}, "groups": {group: {"a|b": cos}}, "norms": {domain: ||g||},
    "group_norms": {group: {domain: ||g_group||}}}, pairs keyed by the sorted domain names.
    Sums run in float64."""
    domains = sorted(grads)
    if any("|" in domain for domain in domains):
        raise ValueError(f"domain names may not contain '|' (the pair separator): {domains}")
    names = sorted(grads[domains[0]]) if domains else []
    for domain in domains:
        if sorted(grads[domain]) != names:
            raise ValueError(f"domain {domain!r} has gradients for other parameters than {domains[0]!r}")
    groups = sorted({module_group(name) for name in names})

    # dot[group][(a, b)] = <g_a, g_b> restricted to the group; (a, a) is the squared norm
    dot: dict[str, dict[tuple[str, str], float]] = {group: {} for group in groups}
    for name in names:
        products = dot[module_group(name)]
        for a, b in combinations(domains, 2):
            products[a, b] = products.get((a, b), 0.0) + _dot(grads[a][name], grads[b][name])
        for a in domains:
            products[a, a] = products.get((a, a), 0.0) + _dot(grads[a][name], grads[a][name])

    def total(a: str, b: str) -> float:
        return sum(dot[group][a, b] for group in groups)

    pairs = list(combinations(domains, 2))
    return {
        "overall": {f"{a}|{b}": cosine(total(a, b), total(a, a), total(b, b)) for a, b in pairs},
        "groups": {
            group: {f"{a}|{b}": cosine(dot[group][a, b], dot[group][a, a], dot[group][b, b]) for a, b in pairs}
            for group in groups
        },
        "norms": {domain: math.sqrt(total(domain, domain)) for domain in domains},
        "group_norms": {
            group: {domain: math.sqrt(dot[group][domain, domain]) for domain in domains} for group in groups
        },
    }


def conflict_summary(cosines: dict, threshold: float = -0.1) -> dict:
    """Per pair of `gradient_cosines(...)`: the overall cosine, the module group with the most
    negative cosine and that cosine, and the groups whose cosine is below `threshold`, most
    negative first. {"a|b": {"overall", "most_negative_group", "most_negative_cosine",
    "groups_below_threshold"}}; the group is None where there are no groups."""
    summary = {}
    for pair, overall in cosines["overall"].items():
        by_group = {group: pairs[pair] for group, pairs in cosines["groups"].items()}
        ranked = sorted(by_group, key=lambda group: (by_group[group], group))
        summary[pair] = {
            "overall": overall,
            "most_negative_group": ranked[0] if ranked else None,
            "most_negative_cosine": by_group[ranked[0]] if ranked else None,
            "groups_below_threshold": [group for group in ranked if by_group[group] < threshold],
        }
    return summary


def _dot(a: torch.Tensor, b: torch.Tensor) -> float:
    return float(torch.sum(a.detach().float() * b.detach().float(), dtype=torch.float64))


def cosine(dot: float, squared_norm_a: float, squared_norm_b: float) -> float:
    if squared_norm_a == 0.0 or squared_norm_b == 0.0:
        return 0.0
    return max(-1.0, min(1.0, dot / math.sqrt(squared_norm_a * squared_norm_b)))
