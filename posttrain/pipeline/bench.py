"""`posttrain pipeline bench`: the same config trained in sync mode and in async mode, one after
the other in one command, and what each got done per hour.

The default workload is the quickstart's (SmolLM2-135M-Instruct, two arithmetic domains, real
verifiers) at temperature 1.0 with room for long replies, so reply lengths have a tail, plus a
model of environment time: each rollout job waits, after its group is generated and scored, for
a time drawn from a heavy-tailed distribution (lognormal, median `env_median_s`, log-sd
`env_sigma`, capped), fixed per stream slot so both modes see the same waits. That wait stands
for what agent episodes spend outside the model (tool commands, builds, test suites): time in
which the trainer could be stepping. In sync mode every step waits for its slowest group while
the trainer idles, then the engine idles while the trainer steps; in async mode (eta =
max_staleness) the trainer trains on the groups that are done while the others generate or
wait. `env_median_s = 0` measures generation and training alone.

Per mode: steps per hour over the training loop (held-out evaluations excluded), the fraction
of that time the trainer waited for rollouts and the engine had nothing to run, the held-out
reward before and after, the staleness of what was trained, and the reply-length distribution.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import sqlite3
import statistics
import tempfile
import time
from functools import partial
from pathlib import Path

from posttrain.evaluate.statistics import paired_bootstrap_ci

DEFAULT_CONFIG = """
seed = {seed}
threads = {threads}

[model]
name = "{model}"

[engine]
backend = "builtin"

[[domains]]
name = "addition"
source = "reasoning-gym:basic_arithmetic"
heldout = {heldout}
params = {{ min_terms = 2, max_terms = 2, min_digits = 1, max_digits = 2, operators = ["+"], allow_negation = false, allow_parentheses = false }}
prompt_template = "{{question}} Reply with only the number."
answer_extraction = "last_number"

[[domains]]
name = "three_term_sums"
source = "reasoning-gym:basic_arithmetic"
heldout = {heldout}
seed = 1
params = {{ min_terms = 3, max_terms = 3, min_digits = 1, max_digits = 1, operators = ["+"], allow_negation = false, allow_parentheses = false }}
prompt_template = "{{question}} Reply with only the number."
answer_extraction = "last_number"

[rollout]
prompts_per_step = {prompts}
group_size = {group_size}
max_new_tokens = {max_new_tokens}
temperature = 1.0

[algorithm]
clip_low = 0.2
clip_high = 0.28
tis_cap = 2.0
dynamic_sampling = false

[optim]
lr = 1e-5
micro_batch_tokens = 2048
bf16_autocast = {bf16}

[train]
steps = {steps}
eval_max_new_tokens = 32
checkpoint_every = 1000
keep_checkpoints = 1
"""


def bench_config(
    model: str = "smollm2-135m",
    steps: int = 12,
    prompts: int = 4,
    group_size: int = 4,
    max_new_tokens: int = 96,
    heldout: int = 64,
    threads: int = 1,
    seed: int = 0,
    bf16: bool = False,
) -> str:
    return DEFAULT_CONFIG.format(
        model=model,
        steps=steps,
        prompts=prompts,
        group_size=group_size,
        max_new_tokens=max_new_tokens,
        heldout=heldout,
        threads=threads,
        seed=seed,
        bf16="true" if bf16 else "false",
    )


def with_mode(config_text: str, mode: str, max_staleness: int, base_dir: Path | None = None) -> str:
    """The config text with `mode` and `[async] max_staleness` set (replacing any given), and
    relative task paths made absolute against `base_dir` (the config's own folder)."""
    import tomllib

    from posttrain.config import dump_config, parse_config

    data = tomllib.loads(config_text)
    data["mode"] = mode
    data.setdefault("async", {})["max_staleness"] = max_staleness
    config = parse_config(data, "bench config")
    if base_dir:
        for domain in config.domains:
            domain.source = domain.absolute_source(base_dir)
    return dump_config(config)


ENV_CAP_S = 30.0


def environment_seconds(slot_key: str, median_s: float, sigma: float) -> float:
    """The modelled environment time of one rollout job: lognormal(ln median, sigma), capped,
    drawn from a hash of the stream slot (the same in both modes and on every retry)."""
    if median_s <= 0:
        return 0.0
    digest = hashlib.sha256(f"env:{slot_key}".encode()).digest()
    u = (int.from_bytes(digest[:8], "little") + 0.5) / 2**64
    z = statistics.NormalDist().inv_cdf(u)
    return min(ENV_CAP_S, median_s * math.exp(sigma * z))


def rollout_with_environment_time(job, ctx, median_s: float = 0.0, sigma: float = 1.0):
    """A rollout job followed by its modelled environment wait (module-level: workers import it)."""
    from posttrain.pipeline.rollout_job import run_rollout_job

    group = run_rollout_job(job, ctx)
    wait_as_environment(ctx, environment_seconds(job.stream.key, median_s, sigma))
    return group


def wait_as_environment(ctx, seconds: float) -> None:
    """Hold the job `seconds` as an environment would, preempted if the job is cancelled."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if ctx.cancelled():
            from posttrain.dispatch import Preempted

            raise Preempted()
        time.sleep(min(0.05, max(deadline - time.monotonic(), 0.0)))


def train_one(config_path: Path, run_dir: Path, job_fn, console=None, eval_before: Path | None = None) -> dict:
    """`posttrain train CONFIG --out RUN_DIR` with a given rollout-job function. `eval_before`:
    the held-out evaluation of the same starting model (greedy, so the same result), reused."""
    import shutil

    from posttrain.pipeline.build import build_mixture
    from posttrain.pipeline.driver import run_rl
    from posttrain.pipeline.training_run import prepare_run, set_torch_threads_and_seed

    run = prepare_run(config_path, run_dir, resume=False)
    if eval_before is not None and eval_before.is_file():
        shutil.copy(eval_before, run.run_dir.eval_before)
    set_torch_threads_and_seed(run.config)
    mixture = build_mixture(run.config, run.config_dir)
    return run_rl(run, mixture, resume=False, console=console, job_fn=job_fn)


def run_bench(
    config_text: str,
    max_staleness: int = 1,
    work_dir: Path | None = None,
    console=None,
    base_dir: Path | None = None,
    env_median_s: float = 0.0,
    env_sigma: float = 1.0,
) -> dict:
    work_dir = Path(work_dir or tempfile.mkdtemp(prefix="posttrain-pipeline-bench-"))
    work_dir.mkdir(parents=True, exist_ok=True)
    report: dict = {}
    evals = {}
    for mode in ("sync", "async"):
        path = work_dir / f"{mode}.toml"
        path.write_text(with_mode(config_text, mode, max_staleness, base_dir))
        run_dir = work_dir / mode
        if console is not None:
            console.print(f"[bold]{mode}[/] -> {run_dir}", highlight=False)
        load_before = os.getloadavg()[0]
        job_fn = partial(rollout_with_environment_time, median_s=env_median_s, sigma=env_sigma)
        # both modes start from the same model: the second reuses the first's greedy "before"
        summary = train_one(path, run_dir, job_fn, console=console, eval_before=work_dir / "sync" / "eval_before.json")
        report[mode] = mode_figures(run_dir, summary)
        # other work on the machine skews one mode's timing: record how busy it was
        report[mode]["load_average_1min"] = [load_before, os.getloadavg()[0]]
        evals[mode] = json.loads((run_dir / "eval_after.json").read_text())["per_item"]
    ids = sorted(evals["sync"])
    delta, low, high = paired_bootstrap_ci(
        [evals["sync"][i] for i in ids], [evals["async"][i] for i in ids], samples=2000, seed=0
    )
    report["speedup"] = report["async"]["steps_per_hour"] / report["sync"]["steps_per_hour"]
    report["max_gap"] = max_staleness
    report["reward_after_async_minus_sync"] = {"delta": delta, "ci95": [low, high], "n_heldout": len(ids)}
    report["workload"] = _workload(config_text)
    report["workload"]["environment_time"] = _environment_figures(work_dir / "sync", env_median_s, env_sigma)
    report["machine"] = {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()}
    report["runs"] = str(work_dir)
    return report


def mode_figures(run_dir: Path, summary: dict) -> dict:
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    loop_s = summary["pipeline"]["train_loop_s"]
    steps = len(records)
    rollout_idle = sum(r["rollout_idle_frac"] * r["step_s"] for r in records) / max(
        sum(r["step_s"] for r in records), 1e-9
    )
    gaps = [g for r in records for g in r["staleness"]]
    return {
        "steps": steps,
        "train_loop_s": loop_s,
        "steps_per_hour": steps / loop_s * 3600,
        "step_s_median": _percentile(sorted(r["step_s"] for r in records), 50),
        "trainer_idle_frac": sum(r["trainer_wait_s"] for r in records) / loop_s,
        "rollout_idle_frac": rollout_idle,
        "reward_before": summary["eval_before"]["overall"],
        "reward_after": summary["eval_after"]["overall"],
        "train_reward_mean": sum(r["reward_mean"] for r in records) / max(steps, 1),
        "staleness_mean": sum(gaps) / max(len(gaps), 1),
        "staleness_max": max(gaps, default=0),
        "partial_groups": sum(r["partial_groups"] for r in records),
        "regenerated": records[-1]["regenerated"] if records else 0,
        "logprob_mismatch_max": max((r.get("logprob_mismatch_max", 0.0) for r in records), default=0.0),
        "reply_tokens": _lengths(run_dir),
    }


def _lengths(run_dir: Path) -> dict:
    db = sqlite3.connect(run_dir / "trajectories.sqlite")
    lengths = sorted(
        len(json.loads(ids))
        for (ids,) in db.execute("SELECT completion_token_ids FROM trajectories WHERE phase = 'train'")
    )
    db.close()
    return {
        "n": len(lengths),
        "p50": _percentile(lengths, 50),
        "p90": _percentile(lengths, 90),
        "p99": _percentile(lengths, 99),
        "max": lengths[-1] if lengths else 0,
        "mean": sum(lengths) / max(len(lengths), 1),
    }


def _environment_figures(run_dir: Path, median_s: float, sigma: float) -> dict:
    """The modelled environment time per rollout group over the run's slots, and per step the
    longest (what a synchronous step waits for)."""
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    per_slot = {s: environment_seconds(s, median_s, sigma) for r in records for s in r["stream_slots"]}
    per_step: dict[str, float] = {}
    for slot, seconds in per_slot.items():
        step = slot.split(":")[0]
        per_step[step] = max(per_step.get(step, 0.0), seconds)
    values = sorted(per_slot.values())
    return {
        "model": f"lognormal(median {median_s} s, log-sd {sigma}), capped at {ENV_CAP_S} s, per rollout group",
        "median_s": median_s,
        "sigma": sigma,
        "groups": len(values),
        "p50_s": _percentile(values, 50),
        "p90_s": _percentile(values, 90),
        "max_s": values[-1] if values else 0,
        "mean_s": sum(values) / max(len(values), 1),
        "slowest_group_per_step_mean_s": sum(per_step.values()) / max(len(per_step), 1),
    }


def _percentile(values: list, q: float):
    if not values:
        return 0
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def _workload(config_text: str) -> dict:
    import tomllib

    data = tomllib.loads(config_text)
    rollout = data.get("rollout", {})
    return {
        "model": data.get("model", {}).get("name"),
        "threads": data.get("threads"),
        "steps": data.get("train", {}).get("steps"),
        "prompts_per_step": rollout.get("prompts_per_step"),
        "group_size": rollout.get("group_size"),
        "max_new_tokens": rollout.get("max_new_tokens"),
        "temperature": rollout.get("temperature"),
        "domains": [d["name"] for d in data.get("domains", [])],
    }
