"""Joint training against sequential training, adaptive mixtures against uniform, and an induced
seesaw with the monitor's reaction (issue 21), on SmolLM2-135M with the builtin engine.

    OMP_NUM_THREADS=2 .venv/bin/python benchmarks/joint_training.py [--size full] \\
        --out benchmarks/results/joint_training.json

Three experiments, each a set of `posttrain train` runs (subprocesses) in --work:

sequential / joint
    Four reasoning-gym domains (two-digit addition, subtraction, three-term sums, one-digit
    multiplication), the same total steps: `sequential` trains them one after another
    ([mixture] policy = "sequential"), `joint` all at once (uniform weights, with the monitor's
    `reweight` reaction). Both run the monitor, so a seesaw in either is caught. Per domain:
    held-out accuracy before and after and the paired-bootstrap CI of the change.
curriculum
    An easy, a learnable and a too-hard domain (one-digit addition, two-digit addition,
    three-digit multiplication) under static uniform weights, learnability and bandit: the steps
    each takes to reach the target mean held-out accuracy (on the monitor's evaluations).
induced_seesaw
    Two domains whose answers conflict: the same additions, one asked plainly, the other with a
    tag saying that + means minus. The mixture starts dominated by the second, so the first falls;
    the run with `reaction = "reweight"` is compared with one without a reaction: how many
    monitor evaluations the alarm took, the fraction of the lost points recovered, the other
    domain's change, and the gradient cosine between the two domains before and during the fall.

Prints JSON (also written to --out): {"sequential": {"domains": {NAME: {"before", "after",
"delta_ci95"}}, "alarms": [...]}, "joint": {...}, "curriculum": {POLICY: {"steps_to_target": N or
null, ...}}, "induced_seesaw": {...}, "cpu": {...}, "size": {EXPERIMENT: {"name", "steps", "heldout", ...}}}.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from posttrain.console import emit_benchmark

ROOT = Path(__file__).resolve().parents[1]

SIZES = {
    # steps per run, held-out items per domain, monitor: every / items, prompts per step
    "tiny": {"model": "tiny-llama", "steps": 4, "heldout": 8, "every": 2, "items": 8, "prompts": 4, "group": 4},
    "small": {"model": "smollm2-135m", "steps": 16, "heldout": 64, "every": 4, "items": 64, "prompts": 8, "group": 8},
    "full": {"model": "smollm2-135m", "steps": 32, "heldout": 128, "every": 4, "items": 128, "prompts": 8, "group": 8},
}

REPLY = "{question} Reply with only the number."


def arithmetic(name: str, seed: int, heldout: int, *, terms=2, digits=(1, 1), op="+", weight=1.0, template=REPLY):
    params = (
        f"{{ min_terms = {terms}, max_terms = {terms}, min_digits = {digits[0]}, max_digits = {digits[1]}, "
        f'operators = ["{op}"], allow_negation = false, allow_parentheses = false }}'
    )
    return (
        f'[[domains]]\nname = "{name}"\nsource = "reasoning-gym:basic_arithmetic"\nseed = {seed}\n'
        f"heldout = {heldout}\nweight = {weight}\nparams = {params}\n"
        f'prompt_template = {json.dumps(template)}\nanswer_extraction = "last_number"\n'
    )


def base_config(size: dict, steps: int) -> str:
    return f"""seed = 0
[model]
name = "{size["model"]}"
[engine]
backend = "builtin"
[rollout]
prompts_per_step = {size["prompts"]}
group_size = {size["group"]}
max_new_tokens = 24
temperature = 0.7
[algorithm]
advantage = "grpo"
loss = "ppo_clip"
clip_low = 0.2
clip_high = 0.28
tis_cap = 2.0
dynamic_sampling = true
[optim]
lr = 2e-5
micro_batch_tokens = 2048
[train]
steps = {steps}
checkpoint_every = {steps}
keep_checkpoints = 1
"""


def monitor(
    size: dict,
    reaction: str = "none",
    conflict_every: int = 0,
    every: int | None = None,
    factor: float = 2.0,
    max_boost: float = 8.0,
) -> str:
    return (
        f'[monitor]\nevery = {every or size["every"]}\nitems = {size["items"]}\nreaction = "{reaction}"\n'
        f"conflict_every = {conflict_every}\nreweight_factor = {factor}\nmax_boost = {max_boost}\n"
    )


def train(work: Path, name: str, text: str) -> Path:
    """One `posttrain train` run; its run directory."""
    config, out = work / f"{name}.toml", work / name
    config.write_text(text)
    if (out / "summary.json").is_file():  # a re-run of the benchmark reuses finished runs
        return out
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "posttrain.cli", "train", str(config), "--out", str(out)]
        + (["--resume"] if (out / "config.toml").is_file() else []),
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    if result.returncode != 0:
        raise SystemExit(f"run {name} failed:\n{result.stderr[-3000:]}")
    print(f"{name}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return out


def records(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines() if line.strip()]


def domain_results(run: Path) -> dict:
    summary = json.loads((run / "summary.json").read_text())
    before, after = summary["eval_before"]["per_domain"], summary["eval_after"]["per_domain"]
    return {
        "domains": {
            d: {
                "before": before[d],
                "after": after[d],
                "delta": summary["per_domain_delta"][d]["delta"],
                "delta_ci95": summary["per_domain_delta"][d]["delta_ci95"],
                "heldout_items": summary["per_domain_delta"][d].get("n"),
            }
            for d in sorted(before)
        },
        "alarms": summary.get("seesaw_alarms", []),
        "wall_s": summary["wall_s"],
    }


def monitor_curve(run: Path, domains: list[str]) -> list[dict]:
    """The monitor's evaluations: step and accuracy per domain (step 0: before training)."""
    summary_before = json.loads((run / "eval_before.json").read_text())
    curve = [{"step": 0, **{d: summary_before["per_domain"][d] for d in domains}}]
    for record in records(run):
        if f"monitor/{domains[0]}/accuracy" in record:
            step = record.get("monitor/step", record["step"])  # async: the weights' step, not the record's
            curve.append({"step": step, **{d: record[f"monitor/{d}/accuracy"] for d in domains}})
    return curve


def sequential_vs_joint(work: Path, size: dict) -> dict:
    domains = [
        arithmetic("add2", 1, size["heldout"], digits=(2, 2)),
        arithmetic("sub", 2, size["heldout"], digits=(1, 2), op="-"),
        arithmetic("three_sums", 3, size["heldout"], terms=3),
        # one-digit products have only 121 distinct items: at most 64 held out, the rest to train on
        arithmetic("mul1", 4, min(size["heldout"], 64), op="*"),
    ]
    text = base_config(size, size["steps"]) + "".join(domains)
    out = {}
    arms = (
        ("sequential", monitor(size) + '[mixture]\npolicy = "sequential"\n'),
        # joint: uniform weights, with the monitor's reweight reaction on
        ("joint", monitor(size, reaction="reweight")),
    )
    for name, extra in arms:
        run = train(work, name, text + extra)
        out[name] = domain_results(run) | {"monitor_curve": monitor_curve(run, ["add2", "sub", "three_sums", "mul1"])}
    return out


SMOOTH = 3  # evaluations in the running mean that steps to the target are counted on


def mean_accuracy(point: dict, domains: list[str]) -> float:
    return sum(point[d] for d in domains) / len(domains)


def steps_to_target(curve: list[dict], domains: list[str], target: float, smooth: int = 1) -> int | None:
    """The first step at which the running mean of the last `smooth` evaluations' mean accuracy
    reaches `target` (smooth = 1: the first evaluation that does)."""
    means = [mean_accuracy(p, domains) for p in curve]
    for i in range(smooth - 1, len(curve)):
        if sum(means[i - smooth + 1 : i + 1]) / smooth >= target:
            return curve[i]["step"]
    return None


def curriculum(work: Path, size: dict) -> dict:
    # Many domains of a real mixture teach nothing at a given moment: solved ones, and ones far
    # beyond the model. Here one easy, one learnable and two too-hard domains; uniform weights
    # spend half the prompts on the two that give GRPO no signal.
    domains = ["easy_add1", "learnable_add2", "hard_mul3", "hard_mul2"]
    every = max(1, size["every"] // 2)  # twice as many evaluations: steps to the target are counted on them
    text = (
        base_config(size, size["steps"])
        + arithmetic("easy_add1", 5, size["heldout"])
        + arithmetic("learnable_add2", 6, size["heldout"], digits=(2, 2))
        + arithmetic("hard_mul3", 7, size["heldout"], digits=(3, 3), op="*")
        + arithmetic("hard_mul2", 9, size["heldout"], digits=(2, 2), op="*")
        + monitor(size, every=every)
    )
    curves = {}
    for policy in ("static", "learnability", "bandit"):
        run = train(work, f"curriculum4-{policy}", text + f'[mixture]\npolicy = "{policy}"\nfloor = 0.05\n')
        curves[policy] = monitor_curve(run, domains)
    start = mean_accuracy(curves["static"][0], domains)
    # The target: the level uniform weights hold at the end of the run (the mean of its last
    # SMOOTH evaluations), reached when a policy's running mean of SMOOTH evaluations gets there.
    # One evaluation of 4 x 64 items moves by about +-0.03 on its own, so a first crossing of a
    # single evaluation (kept below as *_first_crossing, with three quarters of uniform's gain as
    # its target) mostly measures that noise.
    target = sum(mean_accuracy(p, domains) for p in curves["static"][-SMOOTH:]) / SMOOTH
    crossing = start + 0.75 * (mean_accuracy(curves["static"][-1], domains) - start)
    result = {
        "target_mean_accuracy": target,
        "target_definition": f"uniform's mean held-out accuracy over its last {SMOOTH} evaluations; "
        f"steps until a policy's running mean of {SMOOTH} evaluations reaches it",
        "start_mean_accuracy": start,
        "monitor_every": every,
        "first_crossing_target": crossing,
    }
    for policy, curve in curves.items():
        result[policy] = {
            "steps_to_target": steps_to_target(curve, domains, target, SMOOTH),
            "steps_to_target_first_crossing": steps_to_target(curve, domains, crossing),
            "final_mean_accuracy": mean_accuracy(curve[-1], domains),
            "curve": curve,
        }
    for key in ("steps_to_target", "steps_to_target_first_crossing"):
        uniform = result["static"][key]
        best = [result[p][key] for p in ("learnability", "bandit") if result[p][key]]
        result["best_adaptive_ratio" + key.removeprefix("steps_to_target")] = (
            min(best) / uniform if best and uniform else None
        )
    return result


def conflicting_pair(work: Path, n: int = 2000) -> tuple[Path, Path]:
    """The same additions twice: plainly (answer a + b), and with a preface that makes + mean
    minus (answer a - b). One reply cannot satisfy both unless the model reads the preface."""
    import random

    rng = random.Random(8)
    pairs = [(rng.randint(10, 99), rng.randint(1, 9)) for _ in range(n)]
    plain, twisted = work / "plain.jsonl", work / "twisted.jsonl"
    plain.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"p{i}",
                    "prompt": f"Calculate {a} + {b}. Reply with only the number.",
                    "answer": str(a + b),
                    "verifier": "numeric",
                }
            )
            + "\n"
            for i, (a, b) in enumerate(pairs)
        )
    )
    twisted.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"t{i}",
                    "prompt": f"In this puzzle the sign + means minus. Calculate {a} + {b}. "
                    "Reply with only the number.",
                    "answer": str(a - b),
                    "verifier": "numeric",
                }
            )
            + "\n"
            for i, (a, b) in enumerate(pairs)
        )
    )
    return plain, twisted


def jsonl_domain(name: str, path: Path, heldout: int, weight: float) -> str:
    return (
        f'[[domains]]\nname = "{name}"\nsource = "jsonl:{path}"\nheldout = {heldout}\nweight = {weight}\n'
        'answer_extraction = "last_number"\n'
    )


def induced_seesaw(work: Path, size: dict, steps: int) -> dict:
    plain, twisted = conflicting_pair(work)
    # the mixture starts dominated by the twisted domain: the plain one is expected to fall
    text = (
        base_config(size, steps)
        + jsonl_domain("plain", plain, size["heldout"], 1.0)
        + jsonl_domain("twisted", twisted, size["heldout"], 6.0)
    )
    # evaluations twice as often as the size's and a strong reaction (x4, up to x16): the fall
    # is caught sooner and the boost moves the mixture enough to matter within the run
    every = max(1, size["every"] // 2)
    runs = {}
    for reaction in ("none", "reweight"):
        extra = monitor(size, reaction=reaction, conflict_every=2, every=every, factor=4.0, max_boost=16.0)
        runs[reaction] = train(work, f"seesaw2-{reaction}", text + extra)
    result = {}
    for reaction, run in runs.items():
        curve = monitor_curve(run, ["plain", "twisted"])
        alarms = json.loads((run / "summary.json").read_text()).get("seesaw_alarms", [])
        best = max(p["plain"] for p in curve[: _first_alarm_index(curve, alarms) + 1]) if curve else 0.0
        low_index = _first_alarm_index(curve, alarms)
        lowest = curve[low_index]["plain"] if alarms else min(p["plain"] for p in curve)
        lost = best - lowest
        summary = json.loads((run / "summary.json").read_text())
        result[reaction] = {
            "curve": curve,
            "alarms": alarms,
            "evals_to_alarm": _evals_to_alarm(curve, alarms, best),
            "recovered_fraction": ((curve[-1]["plain"] - lowest) / lost) if alarms and lost > 0 else None,
            "other_domain_delta_ci95": summary["per_domain_delta"]["twisted"]["delta_ci95"],
            "plain_delta_ci95": summary["per_domain_delta"]["plain"]["delta_ci95"],
            "cosines": _cosines(run),
        }
    reweight, baseline = result["reweight"], result["none"]
    return {
        "monitor_every": every,
        "evals_to_alarm": reweight["evals_to_alarm"],
        "recovered_fraction": reweight["recovered_fraction"],
        # the same seeds without a reaction: how much of the recovery the reaction itself made
        "recovered_fraction_without_reaction": baseline["recovered_fraction"],
        "plain_end_reweight_minus_none": reweight["curve"][-1]["plain"] - baseline["curve"][-1]["plain"],
        "other_domain_delta_ci95": reweight["other_domain_delta_ci95"],
        "cosines": reweight["cosines"],
        "runs": result,
    }


def _first_alarm_index(curve: list[dict], alarms: list[dict]) -> int:
    if not alarms:
        return len(curve) - 1
    step = alarms[0]["step"]
    return next(i for i, p in enumerate(curve) if p["step"] == step)


def _evals_to_alarm(curve: list[dict], alarms: list[dict], best: float) -> int | None:
    """Monitor evaluations from the first one below the best (the fall) to the alarm, inclusive."""
    if not alarms:
        return None
    alarm_index = _first_alarm_index(curve, alarms)
    peak = next(i for i, p in enumerate(curve) if p["plain"] == best)
    fall = next((i for i in range(peak + 1, alarm_index + 1) if curve[i]["plain"] < best), alarm_index)
    return alarm_index - fall + 1


def _cosines(run: Path) -> list[dict]:
    path = run / "conflicts.jsonl"
    if not path.is_file():
        return []
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [
        {
            "step": row["step"],
            "overall": row["summary"]["plain|twisted"]["overall"],
            "most_negative_group": row["summary"]["plain|twisted"]["most_negative_group"],
            "most_negative_cosine": row["summary"]["plain|twisted"]["most_negative_cosine"],
        }
        for row in rows
        if "plain|twisted" in row["summary"]
    ]


def _sizes_by_experiment(report: dict) -> dict:
    """The size each experiment of a report ran at (older reports had one size for all)."""
    size = report.get("size", {})
    if "name" not in size:
        return size
    keys = {"sequential_joint": "joint", "curriculum": "curriculum", "induced_seesaw": "induced_seesaw"}
    experiments = [e for e, key in keys.items() if key in report]
    seesaw_steps = size.get("seesaw_steps")
    flat = {k: v for k, v in size.items() if k != "seesaw_steps"}
    return {e: flat | ({"steps": seesaw_steps} if e == "induced_seesaw" and seesaw_steps else {}) for e in experiments}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="small")
    parser.add_argument("--only", choices=["sequential_joint", "curriculum", "induced_seesaw"], action="append")
    parser.add_argument("--work", type=Path, help="Where the runs go (kept; a re-run reuses finished runs).")
    parser.add_argument(
        "--seesaw-steps", type=int, help="Steps of the induced-seesaw runs (default: the size's); the fall comes late."
    )
    parser.add_argument("--merge", type=Path, help="A report JSON of the other experiments to add these to.")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    size = SIZES[args.size]
    work = args.work or Path(tempfile.mkdtemp(prefix="posttrain-joint-"))
    work.mkdir(parents=True, exist_ok=True)
    wanted = set(args.only or ["sequential_joint", "curriculum", "induced_seesaw"])
    started = time.perf_counter()
    report: dict = {"size": {}, "work": str(work)}
    if "sequential_joint" in wanted:
        report.update(sequential_vs_joint(work, size))
        report["size"]["sequential_joint"] = {"name": args.size, **size}
    if "curriculum" in wanted:
        report["curriculum"] = curriculum(work, size)
        report["size"]["curriculum"] = {"name": args.size, **size}
    if "induced_seesaw" in wanted:
        steps = args.seesaw_steps or size["steps"]
        report["induced_seesaw"] = induced_seesaw(work, size, steps)
        report["size"]["induced_seesaw"] = {"name": args.size, **size, "steps": steps}
    report["wall_s"] = time.perf_counter() - started
    if args.merge:  # experiments run separately (maybe at different sizes), one report
        earlier = json.loads(args.merge.read_text())
        earlier.pop("cpu", None)
        report = {
            **earlier,
            **{k: v for k, v in report.items() if k not in ("size", "work", "wall_s")},
            "size": {**_sizes_by_experiment(earlier), **report["size"]},
            "wall_s": earlier.get("wall_s", 0.0) + report["wall_s"],
        }
    emit_benchmark(report, args.out)


if __name__ == "__main__":
    main()
