"""`posttrain pipeline ...`: the RL pipeline's dispatcher, benchmarked, watched and steered; and
`posttrain submit`, a training run checked here and handed to a Ray cluster as a job."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from posttrain.console import command_group, console, emit_benchmark, fail, renamed_option
from posttrain.dispatch.cluster_jobs import ADDRESS_HELP
from posttrain.errors import PosttrainError

app = command_group("The RL pipeline: sync vs async benchmark; a running run's dispatcher, watched and steered.")


@app.callback()
def _pipeline() -> None:
    """The RL pipeline: sync vs async benchmark; a running run's dispatcher, watched and steered."""


@app.command("bench")
def bench_command(
    output: Path | None = typer.Option(None, "--output", "-o", metavar="FILE", help="Also write the JSON here."),
    out: Path | None = typer.Option(None, "--out", hidden=True, help="Deprecated spelling of --output."),
    config: Path | None = typer.Option(
        None,
        "--config",
        help="Run config to use in both modes (its mode "
        "and [async] max_staleness are overridden). Default: the built-in workload.",
    ),
    max_staleness: int = typer.Option(1, "--max-staleness", "--eta", min=0, help="eta for the async run."),
    model: str = typer.Option("smollm2-135m", "--model", help="Built-in workload: model spec."),
    steps: int = typer.Option(12, "--steps", min=1, help="Built-in workload: RL steps per mode."),
    prompts: int = typer.Option(4, "--prompts", min=1, help="Built-in workload: prompts per step."),
    group_size: int = typer.Option(4, "--group-size", min=1, help="Built-in workload: samples per prompt."),
    max_new_tokens: int = typer.Option(96, "--max-new-tokens", min=1, help="Built-in workload: reply cap (the tail)."),
    heldout: int = typer.Option(64, "--heldout", min=1, help="Built-in workload: held-out items per domain."),
    threads: int = typer.Option(
        1,
        "--threads",
        min=1,
        help="Built-in workload: torch threads (in async mode the trainer and the engine run at once and share them).",
    ),
    bf16: bool = typer.Option(
        False,
        "--bf16/--fp32",
        help="Built-in workload: the trainer's forward and backward "
        "in bf16 autocast (generation stays fp32). Default fp32, the quickstart's precision: "
        "its logprobs match the engine's, and bf16 is emulated (slow) on AVX2-only CPUs.",
    ),
    env_median_s: float = typer.Option(
        6.0,
        "--env-median-s",
        min=0.0,
        help="Modelled environment time per rollout group: median seconds of a lognormal (0: none).",
    ),
    env_sigma: float = typer.Option(1.0, "--env-sigma", min=0.0, help="Its log-standard-deviation (the tail)."),
    runs: Path | None = typer.Option(None, "--runs", help="Keep both run directories here (default: a temp dir)."),
) -> None:
    """Train the same config in sync mode, then in async mode, and compare them.

    \b
    Each rollout group is followed by a modelled environment wait (lognormal,
    --env-median-s, --env-sigma; the same per stream slot in both modes): the
    time agent episodes spend in tools and test suites. --env-median-s 0
    measures generation and training alone.

    \b
    Reported per mode: steps_per_hour (over the training loop; held-out
    evaluations excluded), trainer_idle_frac (waiting for rollouts),
    rollout_idle_frac (the engine had nothing to run), reward_before and
    reward_after (greedy held-out accuracy), staleness of what was trained,
    and the reply-length distribution (the long tail). Then speedup (async
    steps per hour / sync), max_gap (eta) and the paired difference in
    held-out reward after training, with a bootstrap 95% interval.
    """
    output = renamed_option(output, out, "--out", "--output")
    from posttrain.pipeline.bench import bench_config, run_bench

    try:
        text = (
            config.read_text()
            if config
            else bench_config(model, steps, prompts, group_size, max_new_tokens, heldout, threads, bf16=bf16)
        )
        report = run_bench(
            text,
            max_staleness=max_staleness,
            work_dir=runs,
            console=console,
            base_dir=config.parent.resolve() if config else None,
            env_median_s=env_median_s,
            env_sigma=env_sigma,
        )
    except PosttrainError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"{config}: {exc.strerror}")
    emit_benchmark(report, output)


_FINISHED = "the run is finished (its results: summary.json)"


@app.command("status")
def status_command(run_dir: Path = typer.Argument(..., help="A run directory (running or finished).")) -> None:
    """Show a running job's dispatcher: workers (pid, job), queue, buffer, policy version, counters.
    A finished run is one line saying so (its results are in RUN_DIR/summary.json)."""
    from posttrain.pipeline.control import STATUS, run_finished

    path = run_dir / STATUS
    if run_finished(run_dir):
        console.print(f"{run_dir}: {_FINISHED}; no dispatcher runs now", highlight=False, soft_wrap=True)
        return
    if not path.is_file():
        fail(f"{path}: no dispatch status (the run has not started, or runs the hf engine's inline rollouts)")
    status = json.loads(path.read_text())
    executor = status["executor"]
    console.print(
        f"{run_dir}: {status['mode']} (max_staleness {status['max_staleness']}), step {status['step']}, "
        f"policy version {status['policy_version']}, buffered {status['buffered']}, "
        f"in flight {status['in_flight']}, admitted through step {status['admitted_through']}",
        highlight=False,
    )
    bounds = executor.get("elastic")
    elastic = f" (elastic {bounds['min_workers']}-{bounds['max_workers']})" if bounds else ""
    console.print(
        f"executor {executor['kind']}: {len(executor['workers'])}/{executor['target_workers']} workers{elastic}, "
        f"{executor['running']} running, {executor['queued']} queued; weights {executor['weights']}",
        highlight=False,
    )
    for worker in executor["workers"]:
        job = f"{worker['job']} ({worker['running_s']:.1f}s)" if worker["job"] else "idle"
        where = worker.get("where") or "not placed yet"
        console.print(f"  {worker['name']:>5}  pid {worker['pid'] or '-':>7}  {where}  {job}", highlight=False)
    console.print("counters: " + ", ".join(f"{k} {v}" for k, v in executor["stats"].items()), highlight=False)
    print(json.dumps(status, indent=2))


@app.command("set")
def set_command(
    run_dir: Path = typer.Argument(..., help="The run directory of a running job."),
    weight: list[str] = typer.Option(
        [],
        "--weight",
        "-w",
        help="DOMAIN=WEIGHT, repeatable: the domain's share of new rollouts from the next step on.",
    ),
    workers: int | None = typer.Option(None, "--workers", help="Rollout workers (the pool grows or shrinks)."),
    policy: str | None = typer.Option(
        None, "--policy", help="The mixture policy from the next step on: static, sequential, learnability or bandit."
    ),
) -> None:
    """Change a running job's domain weights, mixture policy or worker count (applied at its next step).

    \b
    The change goes to RUN_DIR/control.json; the run applies it at its next
    step and keeps it in its checkpoints, so it survives --resume. A finished
    run is refused in one line: nothing would read the change.
    """
    from posttrain.config import load_config
    from posttrain.pipeline.control import run_finished, write_control

    if run_finished(run_dir):
        fail(f"{run_dir}: {_FINISHED}; nothing would read a change")
    try:
        config = load_config(run_dir / "config.toml")
        weights = {}
        for item in weight:
            name, sep, value = item.partition("=")
            if not sep:
                raise PosttrainError(f"--weight {item!r}: expected DOMAIN=WEIGHT")
            try:
                weights[name] = float(value)
            except ValueError:
                raise PosttrainError(f"--weight {item!r}: {value!r} is not a number") from None
        if not weights and workers is None and policy is None:
            raise PosttrainError("nothing to change: give --weight DOMAIN=WEIGHT, --policy NAME and/or --workers N")
        control = write_control(run_dir, [d.name for d in config.domains], weights, workers, policy)
    except PosttrainError as exc:
        fail(str(exc))
    print(json.dumps(control, indent=2))


def submit_command(
    config: Path = typer.Argument(..., help="Run config (TOML); checked here before it is submitted."),
    out: str = typer.Option(..., "--out", "-o", help="The run directory, a path on the cluster's machines."),
    address: str | None = typer.Option(None, "--address", help=ADDRESS_HELP),
    resume: bool = typer.Option(False, "--resume", help="Continue the run in --out (on the cluster)."),
    nproc: int | None = typer.Option(None, "--nproc", min=1, help="Trainer processes (FSDP2), as for train."),
    env: list[str] = typer.Option([], "--env", help="KEY=VALUE for the job's environment, repeatable."),
) -> None:
    """Submit `posttrain train CONFIG --out OUT` to a Ray cluster and return at once: prints the job id.

    \b
    The config is checked here first (keys, values, task files: as
    `posttrain train --check`), its task paths made absolute, and uploaded
    with the job. Follow it with `posttrain jobs status|logs|stop JOB_ID`.
    """
    from posttrain.pipeline.cluster_submit import submit_run

    try:
        variables = dict(_key_value(item) for item in env)
        job_id = submit_run(config, out, address, resume=resume, nproc=nproc, env=variables)
    except PosttrainError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"{config}: {exc.strerror}")
    console.print(f"submitted: follow with posttrain jobs logs {job_id}", highlight=False)
    print(job_id)


def _key_value(item: str) -> tuple[str, str]:
    key, sep, value = item.partition("=")
    if not sep or not key:
        raise PosttrainError(f"--env {item!r}: expected KEY=VALUE")
    return key, value
