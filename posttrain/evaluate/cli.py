"""`posttrain eval`: evaluate an agent on tasks; `posttrain eval compare A B`; and
`posttrain engine verify`, the builtin engine checked against transformers and the trainer (an
evaluation, which the engine's own face may not import: posttrain/cli.py adds it to `engine`)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from posttrain.console import command_group, console, emit_json, fail, line_printer, renamed_option, spinner
from posttrain.errors import PosttrainError

app = command_group(invoke_without_command=True)

# summary.json's keys printed at the end (the whole summary is in OUT/summary.json)
BRIEF = (
    "n_tasks",
    "n_attempts",
    "mean_reward",
    "pass_at_1",
    "pass_at_k",
    "failure_modes",
    "tool_call_accuracy",
    "tokens",
    "cost",
    "invalid",
)


@app.callback()
def eval_command(
    ctx: typer.Context,
    tasks: str | None = typer.Option(
        None,
        "--tasks",
        help="Required. A Harbor task directory or suite (tasks/terminal), "
        "or longctx:KINDS:LENGTHS[:COUNT[:SEED]] (e.g. longctx:all:1k,8k:3), "
        "or scene:DIFFICULTIES[:COUNT[:SEED]] (3D scene layouts, e.g. scene:1,2:20).",
    ),
    agent: str = typer.Option(
        "oracle",
        "--agent",
        help="oracle (runs solution/solve.sh), nop (does nothing) or model (--model through an inference engine).",
    ),
    model: str = typer.Option(
        "smollm2-135m",
        "--model",
        help="smollm2-135m, hf:DIR, builtin:DIR, vllm:DIR or openai:BASE_URL#MODEL (key from $OPENAI_API_KEY).",
    ),
    attempts: int = typer.Option(
        1,
        "--attempts",
        "-k",
        min=1,
        help="Attempts per task (pass@k up to this). 1: pass@1, greedy, as a benchmark reports it; "
        "inspect's -k is 4, since a task's solvability by a model cannot be judged from one sample.",
    ),
    concurrency: int = typer.Option(4, "--concurrency", min=1, help="Episodes (sandboxes) at once."),
    out: str | None = typer.Option(
        None,
        "--out",
        "-o",
        metavar="DIR|URL",
        help="Required. Run directory; an existing one is resumed. Or an fsspec URL (s3://bucket/evals/NAME): "
        "written in a working copy under $POSTTRAIN_CACHE/outputs/, filled from the URL first (so it resumes "
        "there too) and published back when the command ends, however it ends.",
    ),
    names: str | None = typer.Option(None, "--names", help="Only these tasks (comma-separated)."),
    tags: str | None = typer.Option(None, "--tags", help="Only tasks with all these tags."),
    seed: int = typer.Option(0, "--seed", help="Seed of every attempt's sampling."),
    temperature: float | None = typer.Option(
        None, "--temperature", min=0.0, help="Default: 0 (greedy) for one attempt, 0.7 for more."
    ),
    max_steps: int | None = typer.Option(
        None,
        "--max-steps",
        min=1,
        help="Turns per episode. Default: the model's agent_settings.json (a trained checkpoint's), else 30.",
    ),
    reply_tokens: int | None = typer.Option(
        None,
        "--reply-tokens",
        min=8,
        help="New tokens per turn. Default: the model's agent_settings.json, else 256.",
    ),
    tools: str | None = typer.Option(
        None,
        "--tools",
        help="Offer only these tools (comma-separated, e.g. bash,finish), or all. Default: the tools in the "
        "model's agent_settings.json (the prompt it was trained with), else all.",
    ),
    scratch_notes: bool | None = typer.Option(
        None,
        "--scratch-notes/--no-scratch-notes",
        help="Budget warnings and recovery notes in the agent's prompt. Default: the model's "
        "agent_settings.json, else on.",
    ),
    prices: Path | None = typer.Option(None, "--prices", help="TOML with [prices] prompt, completion per 1k tokens."),
    api_key_env: str = typer.Option("OPENAI_API_KEY", "--api-key-env", help="openai: the variable holding the key."),
    shared_tokenizer: str | None = typer.Option(
        None,
        "--tokenizer",
        help="openai: the server shares this tokenizer (e.g. smollm2-135m for posttrain serve): send token-id "
        "prompts, get exact token ids back. Default: chat messages.",
    ),
    max_sandboxes: int = typer.Option(64, "--max-sandboxes", min=1, help="Global cap on open sandboxes."),
    quarantine: Path | None = typer.Option(
        None, "--quarantine", help="Skip the tasks in this quarantine.txt (from posttrain inspect)."
    ),
    quality_gate: bool = typer.Option(
        False, "--quality-gate", help="Inspect the tasks first (into OUT/quality) and skip the ones quarantined."
    ),
    backend: str | None = typer.Option(
        None, "--backend", help="Sandbox backend: bwrap (default as root on Linux), local or docker."
    ),
    strict: bool = typer.Option(
        False,
        "--strict",
        help="Stop when a task directory does not load. Default: list it with the reason, count it as "
        "invalid in the summary, and evaluate the rest.",
    ),
) -> None:
    """Evaluate an agent: every task --attempts times in sandboxes, verified by the task's own
    tests. Writes RUN_DIR/results.jsonl (a row per attempt, with its trajectory file),
    summary.json (mean reward, pass@1, pass@k, failure modes, tool-call accuracy, tokens,
    cost), performance.json (time per phase, cache hits), report.md and report.html. Run it
    again with the same --out to resume: finished attempts are skipped. Ctrl-C stops at once
    and says how many attempts were saved (exit 130); SIGTERM does the same (exit 143).

    A model directory with an agent_settings.json (every checkpoint of a run that trained an
    agent) sets the agent's tools, turns, tokens per turn, context, scratch notes and system
    prompt to those it was trained with; one line says so, and any flag given overrides.

    A task directory that does not load (a missing tests/test.sh, a bad task.toml) is listed
    with its reason and counted as invalid in summary.json; the rest are evaluated (--strict
    stops instead). A key in task.toml that Harbor would ignore (a typo) is warned about.

    \b
    posttrain eval --tasks tasks/terminal --agent oracle --out runs/eval-oracle
    posttrain eval --tasks tasks/terminal --agent model --model smollm2-135m -k 4 --out runs/eval-smol
    posttrain eval --tasks tasks/terminal --agent model --model builtin:runs/agent/checkpoints/step-10 --out runs/rl
    posttrain eval --tasks longctx:all:1k,4k:2 --agent model --out runs/longctx
    posttrain eval --tasks scene:1,2:20 --agent model --out runs/scene
    posttrain eval compare runs/eval-a runs/eval-b
    """
    if ctx.invoked_subcommand is not None:
        return
    if tasks is None or out is None:
        fail("--tasks and --out are required (see posttrain eval --help)")
    from posttrain.evaluate.eval_request import AGENTS, EvalRequest, run_eval_request
    from posttrain.stop_signals import exit_code, sigterm_as_interrupt
    from posttrain.storage.artifact_store import ArtifactStore
    from posttrain.storage.directory_at_url import is_url, output_directory

    if agent not in AGENTS:
        fail(f"--agent {agent!r}: choose one of {', '.join(AGENTS)}")
    request = EvalRequest(**{name: value for name, value in ctx.params.items() if name != "out"})  # every other flag
    say = line_printer(console)
    if is_url(out):
        try:
            ArtifactStore(out)  # an unknown protocol, or its package missing: one line
        except PosttrainError as exc:
            fail(f"--out {exc}")
    with output_directory(out, fetch=True, say=say) as directory:  # a URL's working copy, published however it ends
        try:
            with sigterm_as_interrupt():
                summary = run_eval_request(request, directory, say)
        except PosttrainError as exc:
            fail(str(exc))
        except KeyboardInterrupt as stopped:  # Ctrl-C (130) or SIGTERM (143)
            raise typer.Exit(code=exit_code(stopped)) from None
    emit_json({**{key: summary[key] for key in BRIEF}, "out": out}, None)


@app.command("compare")
def compare_command(
    run_a: Path = typer.Argument(..., help="The first eval run directory."),
    run_b: Path = typer.Argument(..., help="The second eval run directory."),
) -> None:
    """Per-task and overall pass-rate differences (B - A) between two eval runs, with a
    paired bootstrap 95% interval over the tasks both ran."""
    from posttrain.evaluate.compare import compare_runs

    try:
        result = compare_runs(run_a, run_b)
    except PosttrainError as exc:
        fail(str(exc))
    for task, row in result["tasks"].items():
        if row["difference"]:
            console.print(f"{task}: {row['a']:.2f} -> {row['b']:.2f} ({row['difference']:+.2f})", highlight=False)
    low, high = result["difference_ci95"]
    console.print(
        f"overall: {result['pass_rate']['a']:.3f} -> {result['pass_rate']['b']:.3f}, "
        f"difference {result['difference']:+.3f} (95% CI [{low:+.3f}, {high:+.3f}]) over "
        f"{result['tasks_compared']} tasks",
        highlight=False,
    )
    print(json.dumps(result, indent=2))


def engine_verify_command(
    model: str = typer.Argument(
        ..., help="A Hugging Face model directory (hf:DIR or DIR), or smollm2-135m / tiny-llama."
    ),
    max_tokens: int = typer.Option(16, "--max-tokens", help="Greedy tokens generated per prompt."),
    output: Path | None = typer.Option(None, "--output", "-o", metavar="FILE", help="Also write the JSON here."),
    out: Path | None = typer.Option(None, "--out", hidden=True, help="Deprecated spelling of --output."),
) -> None:
    """Check that the builtin engine computes MODEL as transformers does; print JSON.

    \b
    On a fixed set of chat prompts:
      greedy_identical      the engine's greedy continuation equals transformers'
                            generate() token for token, on every prompt
      logprob_mismatch_max  the largest |engine - trainer| logprob over every
                            generated token (the trainer's full-sequence forward on
                            the engine's kernels); 0.0 is zero train/inference mismatch
    plus model_type, supported, prompts, greedy_mismatches (prompt indices),
    tokens_compared and row_invariance (the start-up kernel probe).

    \b
    Supported families: llama, qwen2, qwen3, mistral (sliding window), gemma.
    Any other model_type is refused before loading weights: the JSON says
    "supported": false and the error line names the supported ones (exit 2).
    Exit 1 when greedy outputs differ.

    \b
    Example: posttrain engine verify hf:./my-qwen3-checkpoint
    """
    output = renamed_option(output, out, "--out", "--output")
    from posttrain.evaluate.engine_agreement import verify_engine

    try:
        with spinner(f"verifying the builtin engine on {model}") as status:
            report = verify_engine(model, max_tokens, progress=lambda text: status.update(f"{model}: {text}"))
    except PosttrainError as exc:
        fail(str(exc))
    emit_json(report, output)
    if not report["supported"]:
        fail(report["error"])
    if not report["greedy_identical"]:
        raise typer.Exit(code=1)
