"""`posttrain eval`: evaluate an agent on tasks; `posttrain eval compare A B`; and
`posttrain engine verify`, the builtin engine checked against transformers and the trainer (an
evaluation, which the engine's own face may not import: posttrain/cli.py adds it to `engine`)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from posttrain.console import command_group, console, emit_json, fail, line_printer, pass_rate_progress
from posttrain.errors import PosttrainError

app = command_group(invoke_without_command=True)

AGENTS = ("oracle", "nop", "model")


def load_tasks(spec: str, tokenizer, names: str | None = None, tags: str | None = None):
    """A Harbor suite or task directory, a longctx:... or a scene:... spec -> (tasks, invalid task directories)."""
    if spec.startswith("scene:"):
        from posttrain.tasks.scene.source import tasks_from_spec

        return tasks_from_spec(spec), []
    if spec.startswith("longctx:"):
        from posttrain.evaluate.longctx import generate_tasks

        return generate_tasks(spec, tokenizer), []
    from posttrain.tasks.harbor import scan_harbor_suite

    split = lambda text: [t.strip() for t in text.split(",") if t.strip()] if text else None  # noqa: E731
    scan = scan_harbor_suite(Path(spec), names=split(names), tags=split(tags))
    return scan.tasks, scan.invalid


def _prices(path: Path | None) -> dict[str, float]:
    if path is None:
        return {}
    import tomllib

    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise PosttrainError(f"{path}: {exc}") from exc
    prices = data.get("prices", data)
    unknown = set(prices) - {"prompt", "completion"}
    if unknown:
        raise PosttrainError(f"{path}: prices.{sorted(unknown)[0]}: unknown key (prompt, completion: per 1k tokens)")
    try:
        return {k: float(v) for k, v in prices.items()}
    except (TypeError, ValueError) as exc:
        raise PosttrainError(f"{path}: prices: {exc}") from exc


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
    attempts: int = typer.Option(1, "--attempts", "-k", min=1, help="Attempts per task (pass@k up to this)."),
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
    max_steps: int = typer.Option(30, "--max-steps", min=1, help="Turns per episode."),
    reply_tokens: int = typer.Option(256, "--reply-tokens", min=8, help="New tokens per turn."),
    tools: str | None = typer.Option(
        None,
        "--tools",
        help="Offer only these tools (comma-separated, e.g. bash,finish: the prompt a model trained with "
        "[agent] tools saw). Default: all.",
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
    and says how many attempts were saved.

    A task directory that does not load (a missing tests/test.sh, a bad task.toml) is listed
    with its reason and counted as invalid in summary.json; the rest are evaluated (--strict
    stops instead). A key in task.toml that Harbor would ignore (a typo) is warned about.

    \b
    posttrain eval --tasks tasks/terminal --agent oracle --out runs/eval-oracle
    posttrain eval --tasks tasks/terminal --agent model --model smollm2-135m -k 4 --out runs/eval-smol
    posttrain eval --tasks longctx:all:1k,4k:2 --agent model --out runs/longctx
    posttrain eval --tasks scene:1,2:20 --agent model --out runs/scene
    posttrain eval compare runs/eval-a runs/eval-b
    """
    if ctx.invoked_subcommand is not None:
        return
    if tasks is None or out is None:
        fail("--tasks and --out are required (see posttrain eval --help)")
    if agent not in AGENTS:
        fail(f"--agent {agent!r}: choose one of {', '.join(AGENTS)}")
    from pydantic import ValidationError

    from posttrain.agent.loop import AgentConfig
    from posttrain.agent.policies import ModelPolicy, NopPolicy, OraclePolicy
    from posttrain.engine.interface import SamplingParams
    from posttrain.evaluate.runner import run_eval
    from posttrain.models.loading import load_tokenizer
    from posttrain.storage.artifact_store import ArtifactStore
    from posttrain.storage.directory_at_url import is_url, output_directory

    say = line_printer(console)
    url = out
    if is_url(url):
        try:
            ArtifactStore(url)  # an unknown protocol, or its package missing: one line
        except PosttrainError as exc:
            fail(f"--out {exc}")
    with output_directory(url, fetch=True, say=say) as out:
        total = None  # attempts planned, once the tasks are loaded
        try:
            engine, limit = None, None
            if agent == "model":
                from posttrain.engine.factory import engine_for_spec

                engine, tokenizer, limit = engine_for_spec(
                    model, api_key_env, concurrency=concurrency, shared_tokenizer=shared_tokenizer
                )
            else:
                tokenizer = load_tokenizer("smollm2-135m")
            task_list, invalid = load_tasks(tasks, tokenizer, names, tags)
            _report_task_problems(task_list, invalid, strict, say)
            if (quarantine is not None or quality_gate) and any(t.kind == "terminal" for t in task_list):
                from posttrain.quality.gate import gate

                terminal = [t for t in task_list if t.kind == "terminal"]
                kept = gate(
                    terminal,
                    quarantine,
                    inspect_source=tasks if quality_gate and quarantine is None else None,
                    inspect_out=out / "quality",
                    log=say,
                )
                task_list = [t for t in task_list if t.kind != "terminal" or t in kept]
                if not task_list:
                    fail("every task is quarantined; nothing left to evaluate")
            temp = temperature if temperature is not None else (0.0 if attempts == 1 else 0.7)
            params = SamplingParams(temperature=temp, max_tokens=reply_tokens)
            policy = (
                {"oracle": OraclePolicy, "nop": NopPolicy}[agent]()
                if agent != "model"
                else ModelPolicy(engine, tokenizer, params)
            )
            try:
                config = AgentConfig(
                    max_steps=max_steps,
                    reply_tokens=reply_tokens,
                    tools=[t.strip() for t in tools.split(",")] if tools else None,
                    **({"max_context_tokens": limit} if limit else {}),
                )
            except ValidationError as exc:
                fail(f"--tools: {exc.errors()[0]['msg'].removeprefix('Value error, ')}")
            total = len(task_list) * attempts
            progress, on_attempt = _progress(total)
            with progress:
                summary = run_eval(
                    task_list,
                    agent,
                    policy,
                    tokenizer,
                    out,
                    attempts=attempts,
                    concurrency=min(concurrency, max_sandboxes),
                    seed=seed,
                    model=model if agent == "model" else "",
                    engine=engine,
                    params=params,
                    agent_config=config,
                    prices=_prices(prices),
                    on_attempt=on_attempt,
                    tasks_spec=tasks,
                    max_context_tokens=limit,
                    backend=backend,
                    invalid=invalid,
                    say=say,
                )
        except PosttrainError as exc:
            fail(str(exc))
        except KeyboardInterrupt:
            _interrupted(out, total)
        brief = {
            k: summary[k]
            for k in (
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
        }
    emit_json({**brief, "out": url}, None)


def _report_task_problems(task_list: list, invalid: list, strict: bool, say) -> None:
    """Warn about task.toml keys Harbor would ignore; list the task directories that did not
    load (or, with --strict, stop at them)."""
    from posttrain.tasks.harbor import unknown_key_warnings

    for line in unknown_key_warnings(task_list):
        say(f"warning: {line}")
    if invalid and strict:
        fail("\n".join(f"{item.reason}" for item in invalid) + "\n(--strict: nothing was evaluated)")
    for item in invalid:
        say(f"invalid: {item.name}: {item.reason}")
    if invalid:
        count = "1 task directory is" if len(invalid) == 1 else f"{len(invalid)} task directories are"
        say(f"{count} invalid and will not run; evaluating the other {len(task_list)}")
    if not task_list:
        fail("no task left to evaluate: every task directory is invalid")


def _interrupted(out: Path, total: int | None) -> None:
    """Ctrl-C: the attempts already in results.jsonl are kept; say so, and how to go on."""
    from posttrain.evaluate.runner import ResultsLog

    saved = len(ResultsLog(out).rows()) if (out / "results.jsonl").is_file() else 0
    of = f"/{total}" if total else ""
    console.print(f"interrupted: {saved}{of} attempts saved; run the same command to resume", highlight=False)
    raise typer.Exit(code=130)


def _progress(total: int):
    progress, report = pass_rate_progress(total, "eval")

    def on_attempt(row: dict, resumed: bool) -> None:
        report(
            row["passed"],
            f"{row['task_id']}#{row['attempt']}: {'pass' if row['passed'] else 'fail'} ({row['failure'] or 'ok'})",
            resumed,
        )

    return progress, on_attempt


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
    out: Path | None = typer.Option(None, "--out", "-o", help="Also write the JSON here."),
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
    from posttrain.evaluate.engine_agreement import verify_engine

    try:
        with console.status(f"verifying the builtin engine on {model}") as status:
            report = verify_engine(model, max_tokens, progress=lambda text: status.update(f"{model}: {text}"))
    except PosttrainError as exc:
        fail(str(exc))
    emit_json(report, out)
    if not report["supported"]:
        fail(report["error"])
    if not report["greedy_identical"]:
        raise typer.Exit(code=1)
