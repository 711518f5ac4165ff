"""summary.json's `stages` for a run with a warm start: held-out pass@1 of the base model, the
SFT model and the RL model on the same items, and paired bootstrap intervals of the gains; and
its `heldout` table, the same per held-out set of a generated terminal domain
(pipeline/heldout_sets.py), the hand-written set listed task by task."""

from __future__ import annotations

from posttrain.evaluate.statistics import paired_bootstrap_ci
from posttrain.pipeline.evaluation import EvalResult
from posttrain.pipeline.heldout_sets import HELDOUT_SETS


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


def heldout_table(named: list[tuple[str, EvalResult]], sets: dict[str, str], samples: int, seed: int) -> dict:
    """Per held-out set (`sets`: task id -> set name): pass@1 at each named evaluation over the
    set's items every one of them evaluated, and the paired bootstrap 95% interval of each
    later evaluation minus each earlier one (sft_minus_base, rl_minus_base, rl_minus_sft)."""
    table: dict = {}
    for set_name in HELDOUT_SETS:
        ids = sorted(i for i, s in sets.items() if s == set_name and all(i in r.per_item for _, r in named))
        if not ids:
            continue
        entry: dict = {name: sum(r.per_item[i] for i in ids) / len(ids) for name, r in named}
        for k, (later, after) in enumerate(named):
            for earlier, before in named[:k]:
                delta, low, high = paired_bootstrap_ci(
                    [before.per_item[i] for i in ids], [after.per_item[i] for i in ids], samples=samples, seed=seed
                )
                entry[f"{later}_minus_{earlier}"] = {"delta": delta, "ci95": [low, high]}
        entry["n"] = len(ids)
        if set_name == "handwritten":
            entry["tasks"] = {i: {name: r.per_item[i] for name, r in named} for i in ids}
        table[set_name] = entry
    return table


def stages_summary(
    base: EvalResult, sft: EvalResult, rl: EvalResult, samples: int, seed: int, sets: dict[str, str] | None = None
) -> dict:
    """`sets`: task id -> held-out set, for the `heldout` table (left out when None or empty)."""
    ids = sorted(base.per_item)

    def ci(before: EvalResult, after: EvalResult) -> list[float]:
        _, low, high = paired_bootstrap_ci(
            [before.per_item[i] for i in ids], [after.per_item[i] for i in ids], samples=samples, seed=seed
        )
        return [low, high]

    return {
        "stages": {
            name: {
                "heldout_pass_at_1": heldout_pass_at_1(result),
                "n_heldout": len(ids),
                **({"by_steps_needed": result.per_steps_needed} if result.per_steps_needed else {}),
                **({"episodes": result.episodes} if result.episodes else {}),
            }
            for name, result in (("base", base), ("sft", sft), ("rl", rl))
        },
        "rl_minus_base": rl.overall - base.overall,
        "rl_minus_base_ci95": ci(base, rl),
        "rl_minus_sft": rl.overall - sft.overall,
        "rl_minus_sft_ci95": ci(sft, rl),
        "sft_minus_base_ci95": ci(base, sft),
        "heldout_graded": graded_summary([("base", base), ("sft", sft), ("rl", rl)], samples, seed),
        **({"heldout": heldout_table([("base", base), ("sft", sft), ("rl", rl)], sets, samples, seed)} if sets else {}),
    }
