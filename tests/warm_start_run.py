"""A warm-start run directory (base eval -> SFT -> RL) made from a real finished run for the
tests of what shows it (`posttrain runs show`, the dashboard).

A real agent run's warm start takes far longer than a test may, and tiny-llama scores 0 at every
stage, which would hide exactly what these tests check (a base of 0.000 below an SFT and an RL
that score). So the 2-step run a fixture trained is copied, and the evaluations of its three
stages are given as per-item results that tell that story; everything else is written by the
pipeline's own code, as a warm-started run writes it: sft/eval_base.json and eval_sft.json,
eval_before.json (the SFT model's), eval_after.json, sft/metrics.jsonl, sft/model/, and
summary.json from run_summary + stages_summary with the `heldout` table per held-out set."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from posttrain.config import load_config
from posttrain.observe.metrics import JsonlMetricsSink
from posttrain.pipeline.evaluation import EvalResult
from posttrain.pipeline.run_outputs import run_summary
from posttrain.pipeline.stage_summary import stages_summary
from posttrain.storage.atomic import write_json_atomic

# held-out set -> (items, passed at base, at SFT, at RL)
SETS = {"instances": (16, 0, 10, 14), "templates": (8, 0, 4, 6), "families": (8, 0, 2, 3), "handwritten": (8, 0, 1, 2)}
FAMILIES = ("files-dirs", "archives")
SFT_STEPS = 5
# pass@1 by the number of commands a task's reference takes, (base, SFT, RL)
BY_STEPS_NEEDED = ({"1": 0.0, "3": 0.0}, {"1": 0.5, "3": 0.25}, {"1": 0.75, "3": 0.5})


def _items() -> list[tuple[str, str, str]]:
    """(item id, held-out set, family) for every held-out item."""
    return [(f"{name}-{i}", name, FAMILIES[i % 2]) for name, (count, *_) in SETS.items() for i in range(count)]


def _stage_result(stage: int) -> EvalResult:
    per_item = {}
    for name, (count, *passed) in SETS.items():
        per_item.update({f"{name}-{i}": float(i < passed[stage]) for i in range(count)})
    families = {f: [per_item[i] for i, _, fam in _items() if fam == f] for f in FAMILIES}
    overall = sum(per_item.values()) / len(per_item)
    return EvalResult(
        per_item=per_item,
        per_domain={"add": overall},
        overall=overall,
        per_family={f: sum(v) / len(v) for f, v in families.items()},
        per_steps_needed=BY_STEPS_NEEDED[stage],
    )


def expected_pass_at_1() -> dict[str, tuple[float, float, float]]:
    """What the stages scored: overall, per held-out set and per family, (base, SFT, RL)."""
    results = [_stage_result(k) for k in range(3)]
    expected = {"overall": tuple(r.overall for r in results)}
    expected.update({name: tuple(p / n for p in passed) for name, (n, *passed) in SETS.items()})
    expected.update({f: tuple(r.per_family[f] for r in results) for f in FAMILIES})
    return expected


def make_warm_start_run(real_run: Path, out: Path) -> Path:
    """A copy of `real_run` (a finished `posttrain train` directory) turned into a warm-started one."""
    shutil.copytree(real_run, out)
    with open(out / "config.toml", "a") as handle:
        handle.write("\n[sft]\ndemonstrations = 4\n")
    config = load_config(out / "config.toml")
    base, sft, rl = (_stage_result(k) for k in range(3))
    sft_dir = out / "sft"
    sft_dir.mkdir()
    sink = JsonlMetricsSink(sft_dir / "metrics.jsonl")
    for step in range(1, SFT_STEPS + 1):
        sink.write({"step": step, "phase": "demonstrations", "nll": 2.0 / step, "train_time_s": 3.0})
    sink.close()
    last = sorted((out / "checkpoints").iterdir())[-1]
    shutil.copytree(last, sft_dir / "model")
    write_json_atomic(sft_dir / "eval_base.json", base.to_json())
    write_json_atomic(sft_dir / "eval_sft.json", sft.to_json())
    write_json_atomic(out / "eval_before.json", sft.to_json())
    write_json_atomic(out / "eval_after.json", rl.to_json())
    summary = json.loads((out / "summary.json").read_text())
    summary.update(
        run_summary(config, sft, rl, summary["wall_s"], False, {i: "add" for i, _, _ in _items()}),
    )
    sets = {i: name for i, name, _ in _items()}
    summary.update(stages_summary(base, sft, rl, samples=200, seed=0, sets=sets))
    write_json_atomic(out / "summary.json", summary)
    return out
