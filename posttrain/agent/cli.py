"""`posttrain agent ...`: run agents on terminal tasks (Harbor format) in sandboxes."""

from __future__ import annotations

from pathlib import Path

import typer

from posttrain.console import emit_json, fail, pass_rate_progress
from posttrain.errors import PosttrainError

app = typer.Typer(
    help="Agents on terminal tasks (Harbor format) in sandboxes.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

POLICIES = ("oracle", "nop", "model")


@app.callback()
def _agent() -> None:
    """Agents on terminal tasks (Harbor format) in sandboxes."""


def _split(text: str | None) -> list[str] | None:
    return [t.strip() for t in text.split(",") if t.strip()] if text else None


def _load(tasks: Path, names: str | None, tags: str | None):
    from posttrain.tasks.harbor import load_harbor_suite

    return load_harbor_suite(tasks, names=_split(names), tags=_split(tags))


def _progress(total: int, label: str):
    progress, report = pass_rate_progress(total, label)

    def ended(trajectory) -> None:
        passed = bool(trajectory.reward and trajectory.reward.passed)
        report(
            passed,
            f"{trajectory.task_id}: reward {trajectory.reward.value if trajectory.reward else None} "
            f"{trajectory.failure_mode or ''}",
        )

    return progress, ended


@app.command("run")
def run_command(
    tasks: Path = typer.Argument(..., help="A Harbor task directory, or a directory of them (e.g. tasks/terminal)."),
    policy: str = typer.Option(
        "oracle",
        "--policy",
        help="oracle (runs solution/solve.sh), nop (does nothing), or model (an LLM through an inference engine).",
    ),
    names: str | None = typer.Option(None, "--names", help="Only these tasks (comma-separated names)."),
    tags: str | None = typer.Option(None, "--tags", help="Only tasks with all these tags (comma-separated)."),
    attempts: int = typer.Option(1, "--attempts", min=1, help="Episodes per task."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Write trajectories.jsonl and summary.json here."),
    model: str = typer.Option("smollm2-135m", "--model", help="--policy model: model spec or HF directory."),
    engine: str = typer.Option("builtin", "--engine", help="--policy model: builtin or hf."),
    temperature: float = typer.Option(0.7, "--temperature", min=0.0, help="--policy model: sampling temperature."),
    max_steps: int = typer.Option(30, "--max-steps", min=1, help="Turns per episode."),
    reply_tokens: int = typer.Option(256, "--reply-tokens", min=8, help="New tokens per turn."),
    seed: int = typer.Option(0, "--seed", help="Sampling seed."),
    backend: str | None = typer.Option(None, "--backend", help="Sandbox backend: bwrap (default), local, docker."),
) -> None:
    """Run a policy on terminal tasks and verify each episode with the task's tests.

    The same run as `posttrain eval` (whose runner it uses): OUT gets results.jsonl,
    every episode's full trajectory (tokens, tool calls, observations, timings, error
    codes, snapshots) under trajectories/, summary.json and the reports. Without --out
    a temporary directory is used; its path is in the printed JSON.
    """
    import tempfile

    from posttrain.agent.loop import AgentConfig
    from posttrain.evaluate.runner import run_eval

    if policy not in POLICIES:
        fail(f"--policy {policy!r}: choose one of {', '.join(POLICIES)}")
    out = out or Path(tempfile.mkdtemp(prefix=f"posttrain-agent-{policy}-"))
    try:
        task_list = _load(tasks, names, tags)
        agent_policy, tokenizer = _build_policy(policy, model, engine, temperature, reply_tokens, seed)
        config = AgentConfig(max_steps=max_steps, reply_tokens=reply_tokens)
        progress, report = pass_rate_progress(
            len(task_list) * attempts, f"{policy} on {len(task_list) * attempts} episodes"
        )
        with progress:
            summary = run_eval(
                task_list,
                policy,
                agent_policy,
                tokenizer,
                out,
                attempts=attempts,
                seed=seed,
                model=model if policy == "model" else "",
                agent_config=config,
                backend=backend,
                tasks_spec=str(tasks),
                on_attempt=lambda row, resumed: report(
                    row["passed"],
                    f"{row['task_id']}#{row['attempt']}: reward {row['reward']} {row['failure'] or ''}",
                    resumed,
                ),
            )
    except PosttrainError as exc:
        fail(str(exc))
    emit_json({**summary, "out": str(out)}, None)


@app.command("check")
def check_command(
    tasks: Path = typer.Argument(..., help="A Harbor task directory, or a directory of them."),
    names: str | None = typer.Option(None, "--names", help="Only these tasks (comma-separated names)."),
    tags: str | None = typer.Option(None, "--tags", help="Only tasks with all these tags (comma-separated)."),
    backend: str | None = typer.Option(None, "--backend", help="Sandbox backend: bwrap (default), local, docker."),
) -> None:
    """Check that tasks are solvable and not trivially passed: the oracle (solution/solve.sh)
    must pass every task and the do-nothing policy must pass none. Exits 1 when a task fails
    either check, listing it."""
    from posttrain.agent.loop import run_episodes
    from posttrain.agent.policies import NopPolicy, OraclePolicy
    from posttrain.models.loading import load_tokenizer

    try:
        task_list = _load(tasks, names, tags)
        tokenizer = load_tokenizer("smollm2-135m")
        passed = {}
        for policy in (OraclePolicy(), NopPolicy()):
            progress, ended = _progress(len(task_list), policy.name)
            with progress:
                trajectories = run_episodes(task_list, policy, tokenizer, backend=backend, on_episode_end=ended)
            passed[policy.name] = {t.task_id for t in trajectories if t.reward and t.reward.passed}
    except PosttrainError as exc:
        fail(str(exc))
    oracle_failed = sorted({t.id for t in task_list} - passed["oracle"])
    nop_passed = sorted(passed["nop"])
    report = {
        "tasks": len(task_list),
        "oracle_passed": len(passed["oracle"]),
        "nop_passed": len(nop_passed),
        "oracle_failed": oracle_failed,
        "nop_passed_tasks": nop_passed,
    }
    emit_json(report, None)
    if oracle_failed or nop_passed:
        raise typer.Exit(code=1)


def _build_policy(policy: str, model: str, engine: str, temperature: float, reply_tokens: int, seed: int):
    from posttrain.agent.policies import ModelPolicy, NopPolicy, OraclePolicy
    from posttrain.models.loading import load_tokenizer

    if policy == "oracle":
        return OraclePolicy(), load_tokenizer("smollm2-135m")
    if policy == "nop":
        return NopPolicy(), load_tokenizer("smollm2-135m")
    from posttrain.engine.factory import engine_for_spec
    from posttrain.engine.interface import SamplingParams
    from posttrain.models.spec import ModelSpec

    if engine not in ("builtin", "hf"):
        raise PosttrainError(f"--engine {engine!r}: choose builtin or hf")
    inference, tokenizer, _ = engine_for_spec(ModelSpec(engine, model))
    params = SamplingParams(temperature=temperature, max_tokens=reply_tokens)
    return ModelPolicy(inference, tokenizer, params, seed=seed), tokenizer
