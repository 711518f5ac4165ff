"""A hundred domains in one run (issue 47): examples/hundred_domains.toml end to end, its
mixture policy against uniform weights on the same budget, and both against a 4-domain run.

    OMP_NUM_THREADS=2 nice -n 10 .venv/bin/python benchmarks/hundred_domains.py \\
        --out benchmarks/results/hundred_domains.json      # SmolLM2-135M, the config as it is
    .venv/bin/python benchmarks/hundred_domains.py --tiny   # tiny-llama, a few minutes: the
        # pipeline end to end at a toy size; its figures measure nothing about learning

What it does, in --work (kept; a re-run reuses finished runs):

gate
    The config's domains expanded (reasoning-gym:*, terminal-gen:*, scene), and the answer gate's
    verdict per answer domain read from --gate-report (benchmarks/answer_gate.py's JSON; the
    committed one by default). Domains the gate dropped are left out of every arm.
arms
    `posttrain train` runs of the kept domains: `mixture` (the config's policy), `uniform`
    ([mixture] policy = "static", every weight 1) with the same steps, prompts and samples, and
    `four` (four arithmetic domains of benchmarks/joint_training.py, the same settings, fewer
    steps: it is there for step time and memory).
per domain (mixture and uniform)
    Held-out accuracy before and after on the same items, the paired-bootstrap 95% CI of the
    change (summary.json), and the one-sided exact McNemar p-value of a fall; the falls kept by
    Benjamini-Hochberg at 10% across domains, and the count of domains whose CI lies wholly below
    0 before and after that control. The mean change over the learnable domains (before-accuracy
    strictly between 0 and 1) with a paired-bootstrap CI over their items.
cost
    Peak RSS of each run's process, the median step time (the first step left out), the
    monitor's share of the loop time (summary.json's monitor_cost) and the wall time.

Prints JSON (also written to --out): {"size", "gate": {...}, "arms": {ARM: {"domains": {NAME:
{...}}, "falls_fdr", "ci_below_zero", "ci_below_zero_after_fdr", "learnable_mean_delta",
"step_s_median", "peak_rss_mb", ...}}, "mixture_minus_uniform": {...}, "hundred_vs_four": {...},
"cpu": {...}}.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import tomli_w

from posttrain.console import emit_benchmark

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "examples" / "hundred_domains.toml"
GATE_REPORT = ROOT / "benchmarks" / "results" / "answer_gate.json"
FDR = 0.1

# --tiny: the same config at a toy size on the tiny random model (what changes; the rest stays)
TINY = {
    "model": "tiny-llama",
    "steps": 4,
    "four_steps": 4,
    "heldout": 2,
    "prompts": 8,
    "group": 2,
    "max_new_tokens": 8,
    "monitor": {"every": 2, "items": 2, "domains_per_check": 32, "stage_items": 1, "conflict_every": 2},
}


def log(message: str) -> None:
    print(f"[hundred_domains {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def expanded_config(path: Path) -> dict:
    """The config with its domain patterns expanded, as a TOML document."""
    from posttrain.config import dump_config, load_config
    from posttrain.tasks.domain_patterns import expand_domains

    left_out: list[str] = []
    config = expand_domains(load_config(path), log=left_out.append)
    for line in left_out:
        log(line)
    return tomllib.loads(dump_config(config))


def gate_verdicts(report: Path) -> dict[str, dict]:
    data = json.loads(report.read_text())
    return {d["name"]: {"verdict": d["verdict"], "reason": d["reason"]} for d in data["domains"]}


def shrink(doc: dict, tiny: dict) -> dict:
    """The config at --tiny's size: the tiny model, fewer steps, prompts and held-out items."""
    doc = json.loads(json.dumps(doc))
    doc["model"] = {"name": tiny["model"]}
    doc["threads"] = 1
    doc["rollout"].update(prompts_per_step=tiny["prompts"], group_size=tiny["group"])
    doc["rollout"]["max_new_tokens"] = tiny["max_new_tokens"]
    doc["agent"].update(max_steps=1, reply_tokens=tiny["max_new_tokens"])
    doc["train"].update(steps=tiny["steps"], checkpoint_every=tiny["steps"])
    doc["optim"]["lr"] = 1e-3
    doc["monitor"].update(tiny["monitor"])
    for domain in doc["domains"]:
        domain["heldout"] = tiny["heldout"]
    return doc


def arm(doc: dict, policy: str) -> dict:
    doc = json.loads(json.dumps(doc))
    if policy == "static":
        doc["mixture"]["policy"] = "static"
        for domain in doc["domains"]:
            domain["weight"] = 1.0
    return doc


def four_domains(doc: dict, steps: int) -> dict:
    """The 4-domain run of benchmarks/joint_training.py at this config's settings."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from joint_training import arithmetic

    heldout = doc["domains"][0]["heldout"]
    text = "".join(
        [
            arithmetic("add2", 1, heldout, digits=(2, 2)),
            arithmetic("sub", 2, heldout, digits=(1, 2), op="-"),
            arithmetic("three_sums", 3, heldout, terms=3),
            arithmetic("mul1", 4, min(heldout, 64), op="*"),
        ]
    )
    four = {k: v for k, v in doc.items() if k != "domains"}
    four["domains"] = tomllib.loads(text)["domains"]
    four["train"] = {**doc["train"], "steps": steps, "checkpoint_every": steps}
    four["monitor"] = {**doc["monitor"], "domains_per_check": 0}
    return four


def train(work: Path, name: str, doc: dict) -> Path:
    """One `posttrain train` run (a finished one is reused); its run directory."""
    config, out = work / f"{name}.toml", work / name
    config.write_text(tomli_w.dumps(doc))
    if (out / "summary.json").is_file():
        return out
    started = time.perf_counter()
    log(f"{name}: {len(doc['domains'])} domains, {doc['train']['steps']} steps")
    with open(work / f"{name}.log", "w") as output:
        result = subprocess.run(
            [sys.executable, "-m", "posttrain.cli", "train", str(config), "--out", str(out)]
            + (["--resume"] if (out / "config.toml").is_file() else []),
            cwd=ROOT,
            stdout=output,
            stderr=subprocess.STDOUT,
            env={**os.environ, "COLUMNS": "200"},
        )
    if result.returncode != 0:
        raise SystemExit(f"run {name} failed; see {work / f'{name}.log'}")
    log(f"{name}: {time.perf_counter() - started:.0f} s")
    return out


def learnable_mean(domains: dict[str, dict], learnable: list[str]) -> tuple[float, float, float] | None:
    """The mean change over the learnable domains' held-out items, with its paired-bootstrap 95%
    CI. Pass or fail per item, so a domain's changes are its items that fell (-1), rose (+1) and
    stayed (0): the item ids are not needed."""
    from posttrain.evaluate.statistics import paired_bootstrap_ci

    before, after = [], []
    for name in learnable:
        d = domains[name]
        stayed = d["items"] - d["items_worse"] - d["items_better"]
        before += [1.0] * d["items_worse"] + [0.0] * d["items_better"] + [0.0] * stayed
        after += [0.0] * d["items_worse"] + [1.0] * d["items_better"] + [0.0] * stayed
    return paired_bootstrap_ci(before, after, seed=0) if before else None


def arm_results(run: Path, verdicts: dict[str, dict]) -> dict:
    from posttrain.curriculum.seesaw import benjamini_hochberg, mcnemar_one_sided

    summary = json.loads((run / "summary.json").read_text())
    domains, p_fall = {}, {}
    for name, delta in sorted(summary["per_domain_delta"].items()):
        worse, better = delta["items_worse"], delta["items_better"]
        p_fall[name] = mcnemar_one_sided(worse, better)
        domains[name] = {
            "before": summary["eval_before"]["per_domain"][name],
            "after": summary["eval_after"]["per_domain"][name],
            "delta": delta["delta"],
            "delta_ci95": delta["delta_ci95"],
            "items": delta.get("n"),
            "items_worse": worse,
            "items_better": better,
            "p_fall": p_fall[name],
            "gate": verdicts.get(name, {}).get("verdict"),
        }
    kept = benjamini_hochberg(p_fall, FDR)
    below = sorted(n for n, d in domains.items() if d["delta_ci95"][1] < 0)
    learnable = [n for n, d in domains.items() if 0.0 < d["before"] < 1.0]
    mean = learnable_mean(domains, learnable)
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines() if line.strip()]
    step_s = [r["step_s"] for r in records if "step_s" in r][1:]
    return {
        "domains": domains,
        "n_domains": len(domains),
        "falls_fdr": sorted(kept),
        "ci_below_zero": below,
        "ci_below_zero_after_fdr": sorted(set(below) & kept),
        "learnable_domains": len(learnable),
        "learnable_mean_delta": mean[0] if mean else None,
        "learnable_mean_delta_ci95": list(mean[1:]) if mean else None,
        "heldout_before": summary["eval_before"]["overall"],
        "heldout_after": summary["eval_after"]["overall"],
        "step_s_median": statistics.median(step_s) if step_s else None,
        "peak_rss_mb": summary.get("peak_rss_mb"),
        "monitor_cost": summary.get("monitor_cost"),
        "seesaw_alarms": len(summary.get("seesaw_alarms", [])),
        "reward_errors": sum(r.get("reward_errors", 0.0) for r in records),
        "wall_s": summary["wall_s"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, default=CONFIG, help="the hundred-domain run config")
    parser.add_argument("--gate-report", type=Path, default=GATE_REPORT, help="benchmarks/answer_gate.py's JSON")
    parser.add_argument("--tiny", action="store_true", help="tiny-llama at a toy size: the pipeline, in minutes")
    parser.add_argument("--steps", type=int, help="steps of the mixture and uniform arms (default: the config's)")
    parser.add_argument("--four-steps", type=int, default=20, help="steps of the 4-domain run")
    parser.add_argument("--work", type=Path, help="where the runs go (kept; a re-run reuses finished runs)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    started = time.perf_counter()
    work = args.work or Path(tempfile.mkdtemp(prefix="posttrain-hundred-"))
    work.mkdir(parents=True, exist_ok=True)
    verdicts = gate_verdicts(args.gate_report)
    doc = expanded_config(args.config)
    dropped = sorted(d["name"] for d in doc["domains"] if verdicts.get(d["name"], {}).get("verdict", "ok") != "ok")
    doc["domains"] = [d for d in doc["domains"] if d["name"] not in dropped]
    if args.tiny:
        doc = shrink(doc, TINY)
    if args.steps:
        doc["train"].update(steps=args.steps, checkpoint_every=min(doc["train"]["checkpoint_every"], args.steps))
    four_steps = TINY["four_steps"] if args.tiny else args.four_steps
    policy = doc["mixture"]["policy"]
    log(f"{len(doc['domains'])} domains kept, {len(dropped)} dropped by the gate; work in {work}")
    runs = {"mixture": train(work, "mixture", arm(doc, policy)), "uniform": train(work, "uniform", arm(doc, "static"))}
    runs["four"] = train(work, "four", four_domains(arm(doc, policy), four_steps))
    arms = {name: arm_results(run, verdicts) for name, run in runs.items()}
    mixture, uniform, four = arms["mixture"], arms["uniform"], arms["four"]
    report = {
        "size": {
            "name": "tiny" if args.tiny else "config",
            "model": doc["model"]["name"],
            "steps": doc["train"]["steps"],
            "four_steps": four_steps,
            "prompts_per_step": doc["rollout"]["prompts_per_step"],
            "group_size": doc["rollout"]["group_size"],
            "monitor": doc["monitor"],
            "policy": policy,
        },
        "gate": {
            "report": str(
                args.gate_report.relative_to(ROOT) if args.gate_report.is_relative_to(ROOT) else args.gate_report
            ),
            "verdicts": {n: v["verdict"] for n, v in sorted(verdicts.items())},
            "dropped": dropped,
        },
        "arms": arms,
        "mixture_minus_uniform": {
            "learnable_mean_delta": _minus(mixture["learnable_mean_delta"], uniform["learnable_mean_delta"]),
            "heldout_after": mixture["heldout_after"] - uniform["heldout_after"],
        },
        "hundred_vs_four": {
            "step_s_ratio": _ratio(mixture["step_s_median"], four["step_s_median"]),
            "peak_rss_ratio": _ratio(mixture["peak_rss_mb"], four["peak_rss_mb"]),
        },
        "wall_s": time.perf_counter() - started,
        "work": str(work),
    }
    emit_benchmark(report, args.out)


def _relative(path: Path) -> Path:
    return path.resolve().relative_to(ROOT) if path.resolve().is_relative_to(ROOT) else path


def _minus(a, b):
    return None if a is None or b is None else a - b


def _ratio(a, b):
    return None if not a or not b else a / b


if __name__ == "__main__":
    main()
