"""`posttrain <verb>`: parse, build from config, call one function."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from posttrain.console import console, fail
from posttrain.errors import PosttrainError

app = typer.Typer(
    help="posttrain: RL post-training of LLMs on verifiable tasks.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


@app.callback()
def _root() -> None:
    """posttrain: RL post-training of LLMs on verifiable tasks, end to end on one CPU."""
    _quiet_libraries()


def _quiet_libraries() -> None:
    """Library progress bars and warnings would tear through our own progress display."""
    import os
    import warnings

    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    warnings.filterwarnings("ignore", module="transformers")
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


@app.command("train")
def train_command(
    config: Path | None = typer.Argument(None, help="Run config (TOML). Not needed with --resume."),
    out: Path = typer.Option(..., "--out", "-o", help="Run directory to create (or continue, with --resume)."),
    resume: bool = typer.Option(False, "--resume", help="Continue the run in --out from its last checkpoint."),
) -> None:
    """Train a policy with RL (GRPO, RLOO, REINFORCE++; PPO-clip or GSPO loss) on the config's
    domains. Writes OUT/config.toml, metrics.jsonl, trajectories.sqlite, checkpoints/step-N/
    and summary.json (held-out accuracy before/after with a bootstrap 95% interval). With an
    [sft] table, the supervised warm start (see `posttrain sft`) runs first, into OUT/sft/."""
    from posttrain.pipeline.driver import train

    _run_resumable("train", train, config, out, resume)


def _run_resumable(verb: str, run, config: Path | None, out: Path, resume: bool) -> None:
    """Run a resumable job; one error line on bad input, the --resume command on Ctrl-C."""
    try:
        summary = run(config, out, resume=resume, console=console)
    except PosttrainError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        console.print(f"interrupted; continue with: posttrain {verb} --resume --out {out}", highlight=False)
        raise typer.Exit(code=130) from None
    print(json.dumps(summary, indent=2))


@app.command("sft")
def sft_command(
    config: Path | None = typer.Argument(None, help="Run config (TOML) with an [sft] table. Not needed with --resume."),
    out: Path = typer.Option(..., "--out", "-o", help="Output directory to create (or continue, with --resume)."),
    resume: bool = typer.Option(False, "--resume", help="Continue the SFT run in --out from its last checkpoint."),
) -> None:
    """Supervised warm start for agents: demonstrations (each training task's reference steps
    replayed through the agent's tool format, kept when its verifier passes), then rejection
    sampling rounds (the policy's own passed episodes). The loss covers only the model's own
    tokens, as in multi-turn RL. Writes OUT/demonstrations.jsonl, accepted-R.jsonl,
    metrics.jsonl, eval_base.json, eval_sft.json, checkpoints/ and OUT/model, a Hugging Face
    directory that `[model] name = "hf:OUT/model"` and `posttrain eval --model hf:OUT/model` take.
    A train config with an [sft] table runs this stage before RL by itself."""
    from posttrain.pipeline.sft.stage import sft

    _run_resumable("sft", sft, config, out, resume)


def _register_subcommands() -> None:
    from posttrain.sandbox.cli import app as sandbox_app

    app.add_typer(sandbox_app, name="sandbox")
    from posttrain.engine.cli import app as engine_app

    app.add_typer(engine_app, name="engine")
    from posttrain.agent.cli import app as agent_app

    app.add_typer(agent_app, name="agent")
    from posttrain.evaluate.cli import app as eval_app

    app.add_typer(eval_app, name="eval")
    from posttrain.pipeline.cli import app as pipeline_app

    app.add_typer(pipeline_app, name="pipeline")
    from posttrain.tasks.cli import app as tasks_app

    app.add_typer(tasks_app, name="tasks")
    from posttrain.serve.cli import app as serve_app

    app.add_typer(serve_app, name="serve")
    from posttrain.quality.cli import inspect_command

    app.command("inspect")(inspect_command)


_register_subcommands()


def main() -> None:  # pragma: no cover - console entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
