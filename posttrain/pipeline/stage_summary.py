"""summary.json's `stages` for a run with a warm start: held-out pass@1 of the base model, the
SFT model and the RL model on the same items, and paired bootstrap intervals of the gains."""

from __future__ import annotations

from posttrain.evaluate.statistics import paired_bootstrap_ci
from posttrain.pipeline.evaluation import EvalResult


def heldout_pass_at_1(result: EvalResult) -> dict[str, float]:
    """{"overall": X, "<family or domain>": X, ...}: by family for generated terminal tasks."""
    return {"overall": result.overall, **(result.per_family or result.per_domain)}


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
    }
