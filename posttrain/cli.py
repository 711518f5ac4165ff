"""`posttrain <verb>`: parse, build from config, call one function."""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from pathlib import Path

import typer

from posttrain.console import command_group, console, fail
from posttrain.errors import PosttrainError
from posttrain.ports import check_port_free

app = command_group(
    "posttrain: RL post-training of LLMs on verifiable tasks, end to end on one CPU.\n\n"
    "\b\n"
    "Start here:\n"
    "  posttrain train examples/quickstart.toml --out runs/quickstart    GRPO on arithmetic\n"
    "  posttrain train CONFIG --check                                     the plan, nothing run\n"
    "  posttrain eval --tasks tasks/terminal --agent oracle --out runs/e  an agent on tasks\n"
    "  posttrain inspect tasks/terminal --out runs/inspect                the quality gate\n"
    "Every command explains itself: posttrain COMMAND --help."
)


@app.callback(invoke_without_command=True)
def _root(
    version: bool = typer.Option(False, "--version", help="Print posttrain's version and exit.", is_eager=True),
) -> None:
    if version:
        from importlib.metadata import version as installed_version

        print(f"posttrain {installed_version('posttrain')}")
        raise typer.Exit()
    _quiet_libraries()


def _quiet_libraries() -> None:
    """Library progress bars and warnings would tear through our own progress display. Set
    through the environment, before the libraries load: importing transformers here would cost
    seconds before a bad config could be reported."""
    import os
    import warnings

    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    warnings.filterwarnings("ignore", module="transformers")


@app.command("train", short_help="Train a policy with RL (and an SFT warm start) on a config's domains.")
def train_command(
    config: Path | None = typer.Argument(None, help="Run config (TOML). Not needed with --resume."),
    out: str | None = typer.Option(
        None,
        "--out",
        "-o",
        metavar="DIR|URL",
        help="Run directory to create (or continue, with --resume). Or an fsspec URL (s3://bucket/runs/NAME): "
        "the run then lives there, trained in a working copy under $POSTTRAIN_CACHE/runs/ "
        "(~/.cache/posttrain/runs/) and published as [storage] url does; --resume fetches it from the URL, on any "
        "machine. Required unless --check.",
    ),
    resume: bool = typer.Option(False, "--resume", help="Continue the run in --out from its last checkpoint."),
    check: bool = typer.Option(
        False,
        "--check",
        help="Check the config and build its domains, print the resolved plan (domains and their sizes, "
        "steps, samples) and exit; loads no model and writes nothing.",
    ),
    nproc: int | None = typer.Option(
        None,
        "--nproc",
        min=1,
        help="Trainer processes (sets [train] world_size): more than 1 starts them with torch.distributed.run "
        "and shards the policy over them with FSDP2 (gloo on the CPU, NCCL on CUDA: [train] device); rank 0 runs "
        "the rollouts.",
    ),
    from_url: str | None = typer.Option(
        None,
        "--from",
        help="With --resume: first download the run published at this URL ([storage] url, e.g. "
        "s3://bucket/runs/NAME: its files and latest complete checkpoint) into --out, which must be new.",
    ),
    strict: bool = typer.Option(
        False,
        "--strict",
        help='A domain pattern\'s generator that does not load (source = "reasoning-gym:*") is an error, '
        "not a warning line and a run without it; so is a bad [sft] chat_data row.",
    ),
) -> None:
    """Train a policy with RL (GRPO, RLOO, REINFORCE++; PPO-clip or GSPO loss) on the config's
    domains. Writes OUT/config.toml, metrics.jsonl, trajectories.sqlite, checkpoints/step-N/
    and summary.json (held-out accuracy before/after with a bootstrap 95% interval). With an
    [sft] table, the supervised warm start (see `posttrain sft`) runs first, into OUT/sft/.

    \b
    Everything that can be checked without a model is checked before OUT is written: the
    config, the model directory, every domain's files and tasks. A start that fails before
    training leaves only OUT/config.toml; running again with a fixed config replaces it.
    Ctrl-C stops at once; `--resume` continues from the last checkpoint. SIGTERM (a spot
    node's notice) saves the in-flight state within [train] preemption_grace_s, publishes it
    to [storage] url and exits with code 75 (143 if the grace ran out first).

    \b
    --nproc N (or [train] world_size): N trainer processes, each taking its
    share of every step's samples (docs/scale_out.md); checkpoints then hold
    the optimizer's shards, and a run resumes at any --nproc.
    """
    from posttrain.storage.directory_at_url import is_url, local_out

    url = out if out is not None and is_url(out) else None
    if url is None:
        out_dir = local_out(out) if out is not None else None
        if from_url is not None:
            _fetch_published_run(from_url, out_dir, resume)
    else:
        if from_url is not None:
            fail("--from is for a local --out; with --out URL, --resume fetches the run from that URL itself")
        out_dir = _open_working_copy(url, resume, check)
    _run_resumable("train", config, out_dir, resume, check, nproc, url=url, strict=strict)


def _open_working_copy(url: str, resume: bool, check: bool) -> Path:
    """--out URL: this machine's working copy of the run, fetched (--resume) or cleared."""
    from posttrain.pipeline.run_at_url import open_working_copy, working_copy
    from posttrain.train.process_group import launched_world_size

    if check or launched_world_size() > 1:  # --check writes nothing; a trainer rank's launcher prepared it
        return working_copy(url)
    try:
        local, done = open_working_copy(url, resume)
    except PosttrainError as exc:
        fail(str(exc))
    console.print(done, highlight=False, soft_wrap=True)
    return local


def _fetch_published_run(url: str, out: Path | None, resume: bool) -> None:
    from posttrain.pipeline.run_mirror import fetch_run
    from posttrain.train.process_group import launched_world_size

    if not resume or out is None:
        fail("--from URL resumes a published run: posttrain train --resume --out NEW_DIR --from URL")
    if launched_world_size() > 1:  # a trainer rank: the command that launched the ranks fetched the run
        return
    if out.exists() and any(out.iterdir()):
        fail(f"{out}: not empty; --from downloads the run into a new directory")
    try:
        step = fetch_run(url, out)
    except PosttrainError as exc:
        fail(str(exc))
    where = f"its checkpoint at step {step}" if step else "no checkpoint yet"
    console.print(f"fetched {url} into {out}: {where}", highlight=False, soft_wrap=True)


@app.command("sft", short_help="Supervised warm start for agents: demonstrations, then rejection sampling.")
def sft_command(
    config: Path | None = typer.Argument(None, help="Run config (TOML) with an [sft] table. Not needed with --resume."),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Output directory to create (or continue, with --resume). Required unless --check."
    ),
    resume: bool = typer.Option(False, "--resume", help="Continue the SFT run in --out from its last checkpoint."),
    check: bool = typer.Option(
        False, "--check", help="Check the config and its domains, print the plan and exit; writes nothing."
    ),
    strict: bool = typer.Option(
        False, "--strict", help="Refuse to start when a [sft] chat_data row is bad (or a domain pattern does not load)."
    ),
) -> None:
    """Supervised warm start for agents: demonstrations (each training task's reference steps
    replayed through the agent's tool format, kept when its verifier passes), then rejection
    sampling rounds (the policy's own passed episodes). The loss covers only the model's own
    tokens, as in multi-turn RL. Writes OUT/demonstrations.jsonl, accepted-R.jsonl,
    metrics.jsonl, eval_base.json, eval_sft.json, checkpoints/ and OUT/model, a Hugging Face
    directory that `[model] name = "hf:OUT/model"` and `posttrain eval --model hf:OUT/model` take.
    `[sft] chat_data` adds your own JSONL conversations (OpenAI format: messages, optional
    tools), trained on the assistant turns only; a bad row is named by file, row and field and
    skipped, unless --strict. A train config with an [sft] table runs this stage before RL by
    itself."""
    _run_resumable("sft", config, out, resume, check, strict=strict)


@app.command("preference", short_help="DPO or SimPO on your own prompt/chosen/rejected pairs.")
def preference_command(
    config: Path | None = typer.Argument(
        None, help="Config (TOML) with [model] and a [preference] table. Not needed with --resume."
    ),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Output directory to create (or continue, with --resume). Required unless --check."
    ),
    resume: bool = typer.Option(False, "--resume", help="Continue the run in --out from its last checkpoint."),
    check: bool = typer.Option(False, "--check", help="Check the config and every data row; writes nothing."),
    strict: bool = typer.Option(False, "--strict", help="Refuse to start when any data row is bad (default: skip it)."),
) -> None:
    """Preference training on pairs of responses to one prompt, one preferred: JSONL rows of
    `prompt` (text, or a list of chat messages), `chosen` and `rejected` (text, or a list of
    assistant messages), rendered with the model's chat template; the loss covers only the
    responses' tokens. `[preference] loss = "dpo"` (against a frozen copy of the starting model,
    beta sets how far it may move) or `"simpo"` (no reference model, length-normalised, gamma is
    the target margin). A bad row (a side missing or empty, not JSON) is named by file, row and
    field and skipped, unless --strict. Writes OUT/config.toml, metrics.jsonl, checkpoints/step-N,
    summary.json and OUT/model, a Hugging Face directory that `[model] name = "hf:OUT/model"` and
    `posttrain eval --model hf:OUT/model` take. When to use it beside RL: docs/preference.md."""
    from posttrain.pipeline.preference.stage import check_preference, preference_checked

    if out is None and (resume or not check):
        fail("--out is required: posttrain preference CONFIG --out DIR (or --check to only check the config)")
    try:
        checked = check_preference(config, out or Path("(not given)"), resume, strict=strict)
        for problem in checked.problems:
            console.print(f"warning: skipping {problem}", markup=False, highlight=False, soft_wrap=True)
        if check:
            settings = checked.config.preference
            console.print(
                f"plan: {settings.loss} on {len(checked.rows)} pairs, {settings.epochs} epoch(s) of batches of "
                f"{settings.batch_size}, model {checked.config.model.name}",
                highlight=False,
                soft_wrap=True,
            )
            return
        summary = preference_checked(checked, console=console)
    except PosttrainError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        console.print(f"interrupted; continue with: posttrain preference --resume --out {out}", highlight=False)
        raise typer.Exit(code=130) from None
    print(json.dumps(summary, indent=2))


def _run_resumable(
    verb: str,
    config: Path | None,
    out: Path | None,
    resume: bool,
    check: bool,
    nproc: int | None = None,
    url: str | None = None,
    strict: bool = False,
) -> None:
    """Check everything that needs no model (fast, before torch loads), then run; one error line
    on bad input, the --resume command on Ctrl-C. With a world size above 1 this process either
    launches the ranks (torch.distributed.run), or is one of them: rank 0 drives, the others
    follow its trainer calls. `url`: --out URL, whose working copy `out` is."""
    from posttrain.pipeline.shutdown_notice import EXIT_PREEMPTED, RunPreempted
    from posttrain.pipeline.training_run import check_run, out_state
    from posttrain.train.process_group import launched_rank, launched_world_size

    if launched_world_size() > 1 and launched_rank() > 0:
        _follow_rank_zero()
        return
    if out is None and (resume or not check):
        fail(f"--out is required: posttrain {verb} CONFIG --out RUN_DIR (or --check to only check the config)")
    if launched_world_size() > 1:  # rank 0 of the ranks _launch_ranks started (or torchrun run by hand)
        nproc = launched_world_size()
    try:
        checked = check_run(
            config,
            out or Path("(not given)"),
            resume,
            needs_sft=verb == "sft",
            world_size=nproc,
            storage_url=url,
            strict=strict,
        )
        for line in checked.warnings():
            console.print(f"warning: {line}", markup=False, highlight=False, soft_wrap=True)
        live = checked.run.config.logging
        if verb == "train" and live.metrics_port:  # here, not in check_run: `submit` checks runs for other machines
            check_port_free(live.metrics_host, live.metrics_port, "[logging] metrics_port")
        if check:
            _print_plan(checked, out, sft_only=verb == "sft")
            return
        world_size = checked.run.config.train.world_size
        if world_size > 1 and launched_world_size() == 1:
            _launch_ranks(verb, config, url or out, resume, world_size, checked.run.config)
        console.print(f"run directory: {out_state(checked.run)}", highlight=False)
        if verb == "train":
            from posttrain.pipeline.driver import train_checked as run
        else:
            from posttrain.pipeline.sft.stage import sft_checked as run
        with _rank_zero(world_size):
            summary = run(checked, console=console)
    except PosttrainError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        console.print(
            f"interrupted: {_saved_progress(verb, out)}; continue with: posttrain {verb} --resume --out {url or out}",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(code=130) from None
    except RunPreempted as saved:
        published = checked.run.config.storage.url
        again = f"--resume --out {url or out}"
        if published and not url:
            again = f"--resume --out NEW_DIR --from {published}"
        console.print(f"{saved}; continue with: posttrain {verb} {again}", highlight=False, soft_wrap=True)
        raise typer.Exit(code=EXIT_PREEMPTED) from None
    print(json.dumps(summary, indent=2))


def _launch_ranks(verb: str, config: Path | None, out: Path | str, resume: bool, world_size: int, run_config) -> None:
    """Run this same command as `world_size` ranks under torch.distributed.run, on the device
    `run_config`'s [train] device resolves to here (NCCL on CUDA, gloo on the CPU); exit with them."""
    from posttrain.train.device import resolve_device
    from posttrain.train.launch import run_ranks

    device = resolve_device(run_config.train.device, run_config.engine.backend).type

    args = [verb, *([str(config)] if config else []), "--out", str(out), *(["--resume"] if resume else [])]
    console.print(f"starting {world_size} trainer processes (torch.distributed.run)", highlight=False)
    raise typer.Exit(code=run_ranks(world_size, args, device))


@contextmanager
def _rank_zero(world_size: int):
    """Rank 0 of several: in the process group while the run goes, and the other ranks released
    however it ends."""
    if world_size == 1:
        yield
        return
    from posttrain.train.process_group import join_process_group, leave_process_group
    from posttrain.train.trainer_ranks import release_followers

    join_process_group()
    try:
        yield
    finally:
        release_followers()
        leave_process_group()


def _follow_rank_zero() -> None:
    """A rank other than 0: no output of its own; it trains its shards as rank 0 says."""
    from posttrain.train.process_group import join_process_group, leave_process_group
    from posttrain.train.trainer_ranks import follow

    join_process_group()
    try:
        follow()
    except BaseException:
        leave_process_group(wait=False)
        raise
    leave_process_group()


def _saved_progress(verb: str, out: Path) -> str:
    """What a resume would start from: the last complete checkpoint of the run (RL, or SFT)."""
    from posttrain.train.checkpoint import list_checkpoints

    places = [out / "checkpoints", out / "sft" / "checkpoints"] if verb == "train" else [out / "checkpoints"]
    for place in places:
        steps = list_checkpoints(place)
        if steps:
            stage = "SFT " if place.parent.name == "sft" or verb == "sft" else ""
            return f"{stage}checkpoint at step {steps[-1]} saved"
    return "no checkpoint yet (a resume starts from the beginning)"


def _print_plan(checked, out: Path | None, sft_only: bool = False) -> None:
    from posttrain.pipeline.run_plan import plan_lines, run_plan
    from posttrain.pipeline.training_run import out_state

    state = out_state(checked.run) if out is not None else "(no --out given)"
    plan = run_plan(checked.run.config, checked.mixture, state)
    if sft_only:  # posttrain sft runs the warm start alone
        plan["rl"] = None
    for line in plan_lines(plan):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    console.print("check passed: nothing was loaded or written", highlight=False)
    print(json.dumps(plan, indent=2))


def _register_subcommands() -> None:
    from posttrain.sandbox.cli import app as sandbox_app

    app.add_typer(sandbox_app, name="sandbox", short_help="Isolated sandboxes (bubblewrap + overlayfs + cgroups).")
    from posttrain.engine.cli import app as engine_app
    from posttrain.evaluate.cli import engine_verify_command

    engine_app.command("verify")(engine_verify_command)
    app.add_typer(engine_app, name="engine")
    from posttrain.agent.cli import app as agent_app

    app.add_typer(agent_app, name="agent")
    from posttrain.evaluate.cli import app as eval_app

    app.add_typer(
        eval_app,
        name="eval",
        short_help="Run an agent on tasks in sandboxes: pass@k, failure modes, reports; resumable.",
    )
    from posttrain.pipeline.cli import app as pipeline_app

    app.add_typer(
        pipeline_app, name="pipeline", short_help="The RL pipeline: sync vs async bench; watch and steer a run."
    )
    from posttrain.tasks.cli import app as tasks_app

    app.add_typer(
        tasks_app,
        name="tasks",
        short_help="Task sources: what each accepts (every generator by name); terminal task families.",
    )
    from posttrain.tasks.scene.cli import app as scene_app

    app.add_typer(scene_app, name="scene", short_help="3D scene layout tasks: generate, solve, check, render.")
    from posttrain.serve.cli import app as serve_app

    app.add_typer(serve_app, name="serve", short_help="Serve a model behind an OpenAI-compatible API; bench it.")
    from posttrain.quality.cli import inspect_command

    app.command("inspect", short_help="The quality gate: check tasks and quarantine the bad ones.")(inspect_command)
    from posttrain.observe.cli import app as trajectories_app

    app.add_typer(
        trajectories_app, name="trajectories", short_help="A run's stored samples: export as JSONL or Parquet."
    )
    from posttrain.observe.cli import runs_app

    app.add_typer(runs_app, name="runs", short_help="A training run's story as text: posttrain runs show RUN.")
    from posttrain.dispatch.cli import app as jobs_app
    from posttrain.pipeline.cli import submit_command

    app.command("submit", short_help="Submit a training run to a Ray cluster; prints the job id at once.")(
        submit_command
    )
    app.add_typer(jobs_app, name="jobs", short_help="Jobs on a Ray cluster: list, status, logs, stop.")
    from posttrain.dashboard.cli import dashboard_command

    app.command("dashboard", short_help="A web dashboard over run, eval and inspect directories: curves, tokens.")(
        dashboard_command
    )


_register_subcommands()


def main() -> None:  # pragma: no cover - console entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
