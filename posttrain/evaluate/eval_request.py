"""`posttrain eval` as one call: what its flags ask (an EvalRequest), built into an engine, the
tasks, a policy and an agent config, the tasks passed through the quality gate when asked, and
run into an output directory with a progress bar (evaluate/runner.py does the attempts). What
loads torch is imported when the run starts, so that bad flags are reported at once."""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from posttrain.console import pass_rate_progress
from posttrain.errors import PosttrainError
from posttrain.stop_signals import Terminated

AGENTS = ("oracle", "nop", "model")


@dataclass(frozen=True)
class EvalRequest:
    """What `posttrain eval`'s flags ask (their defaults are the command's)."""

    tasks: str  # a Harbor suite or task directory, longctx:... or scene:...
    agent: str  # one of AGENTS
    model: str
    attempts: int
    concurrency: int
    names: str | None  # comma-separated
    tags: str | None  # comma-separated
    seed: int
    temperature: float | None  # None: 0 (greedy) for one attempt, 0.7 for more
    max_steps: int | None  # None (not given): the model's agent_settings.json, else 30
    reply_tokens: int | None  # None: the model's agent_settings.json, else 256
    tools: str | None  # comma-separated or "all"; None: the model's agent_settings.json, else all
    scratch_notes: bool | None  # None: the model's agent_settings.json, else on
    prices: Path | None  # TOML with [prices] prompt, completion per 1k tokens
    api_key_env: str
    shared_tokenizer: str | None
    max_sandboxes: int
    quarantine: Path | None
    quality_gate: bool
    backend: str | None
    strict: bool  # stop at a task directory that does not load


def run_eval_request(request: EvalRequest, out: Path, say: Callable[[str], None]) -> dict:
    """Evaluate into `out` (resuming what it holds) -> the run's summary. Ctrl-C: says how many
    attempts were saved and raises KeyboardInterrupt again (SIGTERM too, under
    stop_signals.sigterm_as_interrupt)."""
    from posttrain.agent.policies import ModelPolicy, NopPolicy, OraclePolicy
    from posttrain.engine.interface import SamplingParams
    from posttrain.evaluate.runner import ResultsLog, run_eval
    from posttrain.models.loading import load_tokenizer

    total = None  # attempts planned, once the tasks are loaded
    try:
        trained = _saved_agent_settings(request)  # a malformed file stops the run before the model loads
        engine, limit = None, None
        if request.agent == "model":
            from posttrain.engine.factory import engine_for_spec

            engine, tokenizer, limit = engine_for_spec(
                request.model,
                request.api_key_env,
                concurrency=request.concurrency,
                shared_tokenizer=request.shared_tokenizer,
            )
        else:
            tokenizer = load_tokenizer("smollm2-135m")
        agent = _agent_settings(request, trained, limit)
        if agent.line:
            say(agent.line)
        task_list, invalid = load_tasks(request.tasks, tokenizer, request.names, request.tags)
        _report_task_problems(task_list, invalid, request.strict, say)
        task_list = _gated(request, task_list, out, say)
        temp = request.temperature if request.temperature is not None else (0.0 if request.attempts == 1 else 0.7)
        params = SamplingParams(temperature=temp, max_tokens=agent.config.reply_tokens)
        policy = (
            {"oracle": OraclePolicy, "nop": NopPolicy}[request.agent]()
            if request.agent != "model"
            else ModelPolicy(engine, tokenizer, params)
        )
        total = len(task_list) * request.attempts
        progress, on_attempt = _progress(total)
        with progress:
            return run_eval(
                task_list,
                request.agent,
                policy,
                tokenizer,
                out,
                attempts=request.attempts,
                concurrency=min(request.concurrency, request.max_sandboxes),
                seed=request.seed,
                model=request.model if request.agent == "model" else "",
                engine=engine,
                params=params,
                agent_config=agent.config,
                system_prompt=agent.system_prompt,
                prices=read_prices(request.prices),
                on_attempt=on_attempt,
                tasks_spec=request.tasks,
                max_context_tokens=limit,
                backend=request.backend,
                invalid=invalid,
                say=say,
            )
    except KeyboardInterrupt as stopped:  # the attempts already in results.jsonl are kept: say so, and how to go on
        saved = len(ResultsLog(out).rows()) if (out / "results.jsonl").is_file() else 0
        of = f"/{total}" if total else ""
        how = "terminated (SIGTERM)" if isinstance(stopped, Terminated) else "interrupted"
        say(f"{how}: {saved}{of} attempts saved; run the same command to resume")
        raise


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


def read_prices(path: Path | None) -> dict[str, float]:
    """--prices: the [prices] table (or the file's top level): prompt, completion per 1k tokens."""
    if path is None:
        return {}
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


def _report_task_problems(task_list: list, invalid: list, strict: bool, say) -> None:
    """Warn about task.toml keys Harbor would ignore; list the task directories that did not
    load (or, with --strict, stop at them)."""
    from posttrain.tasks.harbor import unknown_key_warnings

    for line in unknown_key_warnings(task_list):
        say(f"warning: {line}")
    if invalid and strict:
        raise PosttrainError("\n".join(f"{item.reason}" for item in invalid) + "\n(--strict: nothing was evaluated)")
    for item in invalid:
        say(f"invalid: {item.name}: {item.reason}")
    if invalid:
        count = "1 task directory is" if len(invalid) == 1 else f"{len(invalid)} task directories are"
        say(f"{count} invalid and will not run; evaluating the other {len(task_list)}")
    if not task_list:
        raise PosttrainError("no task left to evaluate: every task directory is invalid")


def _gated(request: EvalRequest, task_list: list, out: Path, say) -> list:
    """--quarantine and --quality-gate: the tasks left once the quarantined terminal tasks are
    skipped (the quality gate inspects them into OUT/quality first)."""
    if (request.quarantine is None and not request.quality_gate) or not any(t.kind == "terminal" for t in task_list):
        return task_list
    from posttrain.quality.gate import gate

    terminal = [t for t in task_list if t.kind == "terminal"]
    kept = gate(
        terminal,
        request.quarantine,
        inspect_source=request.tasks if request.quality_gate and request.quarantine is None else None,
        inspect_out=out / "quality",
        log=say,
    )
    task_list = [t for t in task_list if t.kind != "terminal" or t in kept]
    if not task_list:
        raise PosttrainError("every task is quarantined; nothing left to evaluate")
    return task_list


def _saved_agent_settings(request: EvalRequest) -> tuple:
    """(the settings a model agent saved beside its weights, their file), or (None, "")."""
    from posttrain.agent.trained_settings import model_agent_settings

    found = model_agent_settings(request.model) if request.agent == "model" else None
    return found if found else (None, "")


def _agent_settings(request: EvalRequest, saved: tuple, limit: int | None):
    """The agent's settings: the flags given, over the saved ones (see evaluate/agent_settings.py)."""
    from posttrain.evaluate.agent_settings import AgentFlags, resolve_agent_settings

    settings, source = saved
    flags = AgentFlags(request.max_steps, request.reply_tokens, request.tools, request.scratch_notes)
    return resolve_agent_settings(flags, settings, str(source), limit)


def _progress(total: int):
    progress, report = pass_rate_progress(total, "eval")

    def on_attempt(row: dict, resumed: bool) -> None:
        report(
            row["passed"],
            f"{row['task_id']}#{row['attempt']}: {'pass' if row['passed'] else 'fail'} ({row['failure'] or 'ok'})",
            resumed,
        )

    return progress, on_attempt
