"""summary.json's `stages` for a run with a warm start: held-out pass@1 of the base model, the
SFT model and the RL model on the same items, and paired bootstrap intervals of the gains."""

from __future__ import annotations

from posttrain.evaluate.statistics import paired_bootstrap_ci
from posttrain.pipeline.evaluation import EvalResult


def heldout_pass_at_1(result: EvalResult) -> dict[str, float]:
    """{"overall": X, "<family or domain>": X, ...}: by family for generated terminal tasks."""
    return {"overall": result.overall, **(result.per_family or result.per_domain)}


def graded_summary(named: list[tuple[str, EvalResult]], samples: int, seed: int) -> dict:
    """Beyond pass@1, for verifiers that grade (partial credit, a validity gate: the scene domain):
    the held-out mean reward and validity rate at each named evaluation, over the items every one
    of them graded, and the paired bootstrap 95% interval of each change from one to the next."""
    summary = {}
    for metric, attribute in (("mean_reward", "per_item_reward"), ("validity", "per_item_valid")):
        maps = [getattr(result, attribute) for _, result in named]
        ids = sorted(set.intersection(*(set(m) for m in maps))) if maps else []
        if not ids:
            continue
        names = [name for name, _ in named]
        entry: dict = {name: sum(m[i] for i in ids) / len(ids) for name, m in zip(names, maps)}
        for k in range(1, len(named)):
            before, after = maps[k - 1], maps[k]
            delta, low, high = paired_bootstrap_ci(
                [before[i] for i in ids], [after[i] for i in ids], samples=samples, seed=seed
            )
            entry[f"{names[k]}_minus_{names[k - 1]}"] = {"delta": delta, "ci95": [low, high]}
        entry["n"] = len(ids)
        summary[metric] = entry
    return summary


def stages_summary(base: EvalResult, sft: EvalResult, rl: EvalResult, samples: int, seed: int) -> dict:
    ids = sorted(base.per_item)

    def ci(before: EvalResult, after: EvalResult) -> list[float]:
        _, low, high = paired_bootstrap_ci(
            [before.per_item[i] for i in ids], [after.per_item[i] for i in ids], samples=samples, seed=seed
        )
        return [low, high]

    return {
        "stages": {
            name: {"heldout_pass_at_1": heldout_pass_at_1(result), "n_heldout": len(ids)}
            for name, result in (("base", base), ("sft", sft), ("rl", rl))
        },
        "rl_minus_base": rl.overall - base.overall,
        "rl_minus_base_ci95": ci(base, rl),
        "rl_minus_sft": rl.overall - sft.overall,
        "rl_minus_sft_ci95": ci(sft, rl),
        "sft_minus_base_ci95": ci(base, sft),
        "heldout_graded": graded_summary([("base", base), ("sft", sft), ("rl", rl)], samples, seed),
    }
