"""`posttrain trajectories export`: a run's stored samples as JSONL or Parquet. `posttrain runs show`:
a run's story as text."""

from __future__ import annotations

from pathlib import Path

import typer

from posttrain.console import command_group, console, fail, renamed_option
from posttrain.errors import PosttrainError

app = command_group("A training run's stored samples (trajectories.sqlite).")


@app.command("export")
def export_command(
    run: Path = typer.Argument(..., help="A run directory (posttrain train --out) with trajectories.sqlite."),
    fmt: str = typer.Option("jsonl", "--format", "-f", help="jsonl or parquet."),
    output: Path | None = typer.Option(
        None, "--output", "-o", metavar="FILE", help="The file to write (default: RUN/trajectories.FORMAT)."
    ),
    out: Path | None = typer.Option(None, "--out", hidden=True, help="Deprecated spelling of --output."),
) -> None:
    """Every sample of the run, one record each: step, phase, task, domain, sample index, policy
    version, prompt and completion token ids, the engine's logprobs, text, finish reason, reward,
    passed, the verifier's details (for agent episodes: the turns and tool calls) and advantage.
    Reads the store without changing it, also while the run trains."""
    output = renamed_option(output, out, "--out", "--output")
    from posttrain.observe.trajectory_export import export_trajectories

    target = output or run / f"trajectories.{fmt}"
    try:
        count = export_trajectories(run, target, fmt)
    except PosttrainError as exc:
        fail(str(exc))
    console.print(f"exported {count} samples to {target}", highlight=False)


runs_app = command_group("Training runs as text: what ran and what it achieved, without a browser.")


@runs_app.command("show")
def show_command(
    run: Path = typer.Argument(..., help="A training run directory (posttrain train --out)."),
) -> None:
    """The run's story: config, stages (base eval, SFT, RL), held-out pass@1 base -> SFT -> RL
    (before -> after without a warm start) overall, per held-out set and per family with 95%
    intervals, each domain's final training reward, steps, wall time and the checkpoints."""
    from posttrain.observe.run_story import read_story, story_lines

    try:
        story = read_story(run)
    except PosttrainError as exc:
        fail(str(exc))
    typer.echo("\n".join(story_lines(story)))  # the command's output: stdout, for a pipe
