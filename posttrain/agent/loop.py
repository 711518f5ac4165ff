"""The agent loop: episodes of terminal tasks, stepped together.

Each round, every live episode's prompt goes to the policy in one batch (one engine call), then
each episode runs its tool calls in its own sandbox (in parallel threads). An episode ends when
the agent calls `finish`, or a budget runs out (steps, generated tokens, wall time, cost), or
something unrecoverable happens (the sandbox dies, the context cannot fit). Then the verifier
runs: tests are copied in only now.

Recovery, in order:
- a malformed call, a bad argument, a failing command: an error observation the model reads;
- a transient tool error (the sandbox hiccupped): retried with exponential backoff;
- a streak of failed turns: the sandbox is restored to the last good checkpoint (a snapshot
  taken after a turn whose calls all succeeded), and a scratch note says so; `rollback` does
  the same on request;
- a dead sandbox: a clean end with failure_mode "sandbox_died", never an exception;
- an engine that fails mid-episode (a step raised, its process or replica died: EngineError,
  CallAborted): the episodes of that call end with failure_mode "engine_error".
Infrastructure failures (trajectory.INFRA_FAILURES) are not verified: the reward is 0 and the
episode is left out of training. A preempted job (Preempted from the engine call) is not an
outcome of its episodes: it propagates, their sandboxes closed.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from posttrain.agent.context import ContextOverflow, LayeredContext
from posttrain.agent.policies import EpisodeView, Policy, Reply
from posttrain.agent.task_sandbox import build_task_environment, open_task_sandbox
from posttrain.agent.tool_calls import MalformedCall, parse_tool_calls
from posttrain.agent.tools import TRANSIENT, ErrorCode, ToolResult, execute, tool_schemas, validate_call
from posttrain.agent.trajectory import ToolCallRecord, Trajectory, TurnRecord
from posttrain.agent.verifier import run_verifier
from posttrain.config import AgentConfig  # the [agent] table; importers of agent.loop find it here too
from posttrain.dispatch.job import Preempted
from posttrain.engine.service.rollout_engine import CallAborted, EngineError
from posttrain.models.chat_tokens import ChatTokens
from posttrain.sandbox.interface import SandboxError
from posttrain.tasks.records import Reward, Task

STATE_CHANGING = {"bash", "write_file", "edit_file"}


SYSTEM_PROMPT = """You are an agent working in a Linux sandbox to complete a task. Act only through tools.
Call a tool by writing exactly one line:
<tool_call>{{"name": "<tool>", "arguments": {{...}}}}</tool_call>
You may call several tools in one reply. After each reply you get the tools' output.
When the task is complete, call finish.

Tools (arguments with ? are optional):
{tools}"""


@dataclass
class _Episode:
    task: Task
    trajectory: Trajectory
    context: LayeredContext | None = None
    sandbox: object = None
    workdir: str = "/app"
    started: float = field(default_factory=time.perf_counter)
    turn: int = 0
    streak: int = 0
    idle: int = 0  # turns in a row without a tool call
    good_turns: int = 0
    last_good: str | None = None
    last_good_turn: int | None = None
    done: bool = False
    max_steps: int = 30
    wall_time_s: float = 600.0
    seed: int | None = None


def system_prompt(tools: list[str] | None = None) -> str:
    """The tools' JSON schemas, rendered as signatures: the same contract in a third of the
    tokens, which a small model's context (and the prefill) can afford. `tools`: only these
    (the `[agent] tools` setting); default all."""
    return SYSTEM_PROMPT.format(tools="\n".join(_signature(s) for s in tool_schemas(tools)))


def _signature(schema: dict) -> str:
    params = schema["parameters"]
    required = set(params.get("required", []))
    args = ", ".join(
        f"{name}{'' if name in required else '?'}: {spec.get('type', 'any')}"
        for name, spec in params.get("properties", {}).items()
    )
    return f"- {schema['name']}({args}): {schema['description']}"


def run_episodes(
    tasks: list[Task],
    policy: Policy,
    tokenizer,
    config: AgentConfig | None = None,
    backend: str | None = None,
    on_episode_end=None,
    seeds: list[int] | None = None,
    max_live: int | None = None,
    system: str | None = None,
) -> list[Trajectory]:
    """Run one episode per task (the same task may appear several times: a GRPO group) and
    verify each; returns the trajectories in task order. Never raises for a task's failure: it
    is in the trajectory. At most `max_live` episodes (and so sandboxes) are open at once; a new
    one starts as soon as one ends. `seeds`, one per episode, make a model policy's sampling
    depend on the episode alone. `system`: the system message (a trained model's saved one);
    default: system_prompt(config.tools)."""
    config = config or AgentConfig()
    chat = ChatTokens(tokenizer)
    system = system if system is not None else system_prompt(config.tools)
    cap = max_live or len(tasks) or 1
    pending = list(range(len(tasks)))
    episodes: list[_Episode | None] = [None] * len(tasks)
    live: list[_Episode] = []

    def finalize(episode: _Episode) -> None:
        _finish(episode)  # verify now: a finished episode does not wait for the slowest one
        if on_episode_end is not None:
            on_episode_end(episode.trajectory)

    try:
        with ThreadPoolExecutor(max_workers=config.parallel_tools) as pool:
            while pending or live:
                while pending and len(live) < cap:
                    index = pending.pop(0)
                    episode = _start(tasks[index], policy, chat, system, config, backend)
                    episode.seed = seeds[index] if seeds else None
                    episode.trajectory.metadata["index"] = index  # its place in `tasks`, for callbacks
                    episodes[index] = episode
                    live.append(episode)
                list(pool.map(finalize, [e for e in live if e.done]))
                live = [e for e in live if not e.done]
                views = []
                for episode in live:
                    try:
                        prompt = episode.context.prompt_ids(episode.turn)
                    except ContextOverflow as exc:
                        _end(episode, "error", "context_overflow", str(exc))
                        continue
                    views.append(
                        (
                            episode,
                            EpisodeView(
                                episode.task,
                                prompt,
                                episode.turn,
                                episode.sandbox,
                                episode.workdir,
                                episode.seed,
                                episode.context.messages(),
                            ),
                        )
                    )
                if not views:
                    continue
                started = time.perf_counter()
                try:
                    replies = policy.act([v for _, v in views])
                except Preempted:
                    raise
                except Exception as exc:  # a policy failure ends these episodes, not the run
                    mode = "engine_error" if isinstance(exc, (EngineError, CallAborted)) else "policy_error"
                    for episode, _ in views:
                        _end(episode, "error", mode, f"{type(exc).__name__}: {exc}")
                    continue
                generate_s = (time.perf_counter() - started) / max(len(views), 1)
                list(
                    pool.map(
                        lambda item, generate_s=generate_s: _take_turn(item[0], item[1], item[2], generate_s, config),
                        [(e, v, r) for (e, v), r in zip(views, replies)],
                    )
                )
    except BaseException:
        # Ctrl-C or a crash: close the sandboxes still open (finished episodes closed theirs);
        # the interrupted episodes have no result and are redone by a resumed run.
        for episode in live:
            _close_sandbox(episode)
        raise
    return [e.trajectory for e in episodes]


def _start(
    task: Task, policy: Policy, chat: ChatTokens, system: str, config: AgentConfig, backend: str | None
) -> _Episode:
    episode = _Episode(task, Trajectory(task.id, policy.name))
    episode.max_steps = min(config.max_steps, task.limits.max_steps)
    episode.wall_time_s = config.wall_time_s or task.limits.agent_timeout_s
    instruction = (
        task.instruction
        if isinstance(task.instruction, str)
        else "\n\n".join(m["content"] for m in task.instruction if m.get("role") != "system")
    )
    episode.context = LayeredContext(chat, system, instruction, config.max_context_tokens, config.reply_tokens)
    try:
        built = build_task_environment(task, backend)
        episode.workdir = built.workdir
        episode.sandbox = open_task_sandbox(task, backend, built)
        policy.begin(EpisodeView(task, [], 0, episode.sandbox, episode.workdir))
    except (SandboxError, OSError) as exc:
        _end(episode, "error", "environment_error", str(exc))
    episode.trajectory.setup_s = time.perf_counter() - episode.started
    episode.started = time.perf_counter()  # the agent's wall-time budget starts now
    return episode


def _end(episode: _Episode, stop_reason: str, failure_mode: str | None = None, error: str | None = None) -> None:
    episode.done = True
    episode.trajectory.stop_reason = stop_reason
    if failure_mode:
        episode.trajectory.failure_mode = failure_mode
    if error:
        episode.trajectory.error = error


def _take_turn(episode: _Episode, view: EpisodeView, reply: Reply, generate_s: float, config: AgentConfig) -> None:
    record = TurnRecord(
        episode.turn,
        list(view.prompt_ids),
        list(reply.token_ids),
        list(reply.logprobs),
        list(reply.token_versions),
        reply.text,
        generate_s=generate_s,
        cached_prompt_tokens=reply.cached_prompt_tokens,
    )
    episode.trajectory.turns.append(record)
    episode.context.clear_scratch()
    started = time.perf_counter()
    calls = parse_tool_calls(reply.text)[: config.max_calls_per_turn]
    finished = False
    if not calls:
        outcome = ToolResult(
            'no tool call found. Call a tool as <tool_call>{"name": ..., "arguments": {...}}'
            "</tool_call>, and call finish when the task is complete.",
            ErrorCode.MALFORMED_CALL,
        )
        record.tool_calls.append(ToolCallRecord("", None, outcome.observation(), outcome.error.value, None, 0.0))
    for call in calls:
        if isinstance(call, MalformedCall):
            outcome = ToolResult(f"malformed tool call: {call.reason}", ErrorCode.MALFORMED_CALL)
            record.tool_calls.append(
                ToolCallRecord("", call.raw[:500], outcome.observation(), outcome.error.value, None, 0.0)
            )
            continue
        checked = validate_call(call.name, call.arguments, config.tools)
        if isinstance(checked, ToolResult):
            record.tool_calls.append(
                ToolCallRecord(call.name, call.arguments, checked.observation(), checked.error.value, None, 0.0)
            )
            continue
        tool, args = checked
        if tool.name == "finish":
            record.tool_calls.append(ToolCallRecord("finish", call.arguments, "done", None, None, 0.0))
            finished = True
            break
        if tool.name == "rollback":
            record.tool_calls.append(_rollback(episode, record, "requested"))
            continue
        if tool.name == "bash":  # never past the episode's wall-time budget
            remaining = episode.wall_time_s - (time.perf_counter() - episode.started)
            args = args.model_copy(update={"timeout_s": max(1.0, min(args.timeout_s, remaining))})
        result, attempts = _execute_with_retries(tool, args, episode, config)
        record.tool_calls.append(
            ToolCallRecord(
                tool.name,
                call.arguments,
                result.observation(),
                result.error.value if result.error else None,
                result.exit_code,
                result.duration_s,
                attempts,
            )
        )
        if result.error == ErrorCode.SANDBOX_ERROR and not _alive(episode):
            record.tools_s = time.perf_counter() - started
            _end(episode, "error", "sandbox_died", result.output)
            return
    record.tools_s = time.perf_counter() - started
    _after_turn(episode, record, config, finished)


def _execute_with_retries(tool, args, episode: _Episode, config: AgentConfig) -> tuple[ToolResult, int]:
    attempts = 0
    while True:
        attempts += 1
        result = execute(tool, args, episode.sandbox, episode.workdir)
        if result.error not in TRANSIENT or attempts > config.tool_retries:
            return result, attempts
        time.sleep(config.retry_backoff_s * 2 ** (attempts - 1))


def _alive(episode: _Episode) -> bool:
    try:
        return episode.sandbox.exec("true", timeout=30).exit_code == 0
    except (SandboxError, OSError):
        return False


def _rollback(episode: _Episode, record: TurnRecord, why: str) -> ToolCallRecord:
    if episode.last_good is None:
        return ToolCallRecord(
            "rollback", {}, "nothing to roll back to: no checkpoint yet", ErrorCode.NOT_FOUND.value, None, 0.0
        )
    started = time.perf_counter()
    try:
        episode.sandbox.restore(episode.last_good)
    except (SandboxError, OSError) as exc:
        return ToolCallRecord(
            "rollback",
            {},
            f"rollback failed: {exc}",
            ErrorCode.SANDBOX_ERROR.value,
            None,
            time.perf_counter() - started,
        )
    record.restored_snapshot = episode.last_good
    record.events.append(f"rollback ({why}) to the checkpoint after turn {episode.last_good_turn}")
    return ToolCallRecord(
        "rollback",
        {},
        f"restored the sandbox to its state after turn {episode.last_good_turn}",
        None,
        None,
        time.perf_counter() - started,
    )


def _after_turn(episode: _Episode, record: TurnRecord, config: AgentConfig, finished: bool) -> None:
    calls = record.tool_calls
    failed = [c for c in calls if c.error and c.error != ErrorCode.OUTPUT_TRUNCATED.value]
    observation = "\n\n".join(f"[{c.name or 'call'}] {c.observation}" for c in calls) or "(no tool call)"
    summary = ", ".join(f"{c.name or 'malformed'}{'!' if c.error else ''}" for c in calls) or "no tool call"
    episode.context.add_turn(record.completion_ids, observation, summary)
    episode.turn += 1
    episode.streak = episode.streak + 1 if calls and len(failed) == len(calls) else 0
    episode.idle = 0 if any(c.name for c in calls) else episode.idle + 1
    changed = any(c.name in STATE_CHANGING and not c.error for c in calls)
    if not failed and changed:
        episode.good_turns += 1
        if episode.good_turns % config.checkpoint_every == 0:
            try:
                episode.last_good = episode.sandbox.snapshot()
                episode.last_good_turn = record.index
                record.snapshot_id = episode.last_good
            except (SandboxError, OSError) as exc:
                record.events.append(f"checkpoint failed: {exc}")
    if episode.streak >= config.failure_streak and episode.last_good is not None:
        rolled = _rollback(episode, record, f"{episode.streak} failed turns in a row")
        if not rolled.error and config.scratch_notes:
            episode.context.note(
                f"The last {episode.streak} turns failed, so the sandbox was rolled back to its "
                f"state after turn {episode.last_good_turn}. Try a different approach."
            )
        episode.streak = 0
    trajectory = episode.trajectory
    trajectory.cost = _cost(trajectory, config)
    if finished:
        _end(episode, "finish")
    elif episode.turn >= episode.max_steps:
        _end(episode, "max_steps", "max_steps")
    elif config.max_idle_turns is not None and episode.idle >= config.max_idle_turns:
        _end(episode, "idle", "idle")
    elif trajectory.completion_tokens >= config.max_completion_tokens:
        _end(episode, "max_tokens", "max_tokens")
    elif time.perf_counter() - episode.started >= episode.wall_time_s:
        _end(episode, "timeout", "timeout")
    elif config.max_cost is not None and trajectory.cost >= config.max_cost:
        _end(episode, "cost", "cost")
    elif config.scratch_notes and episode.max_steps - episode.turn <= 2:
        episode.context.note(f"{episode.max_steps - episode.turn} turn(s) left: finish the task and call finish.")


def _cost(trajectory: Trajectory, config: AgentConfig) -> float:
    return (
        trajectory.prompt_tokens * config.cost_per_1k_prompt_tokens
        + trajectory.completion_tokens * config.cost_per_1k_completion_tokens
    ) / 1000.0


def _finish(episode: _Episode) -> None:
    trajectory = episode.trajectory
    trajectory.context_events = [vars(e) for e in episode.context.events] if episode.context else []
    trajectory.duration_s = time.perf_counter() - episode.started
    if episode.sandbox is None:
        trajectory.reward = Reward(value=0.0, passed=False, details={"error": trajectory.error or "no sandbox"})
        return
    try:
        if trajectory.infra_failed:  # nothing the verifier says about it would be the policy's
            error = trajectory.error or trajectory.failure_mode
            trajectory.reward = Reward(value=0.0, passed=False, details={"error": f"not verified: {error}"[:500]})
        else:
            started = time.perf_counter()
            trajectory.reward = run_verifier(episode.task, episode.sandbox, episode.workdir)
            trajectory.verifier_s = time.perf_counter() - started
            if trajectory.reward.details.get("timed_out"):
                trajectory.failure_mode = trajectory.failure_mode or "verifier_timeout"
            # the verifier's infrastructure failing outranks how the agent stopped (max_steps,
            # timeout, ...): without a verdict the episode says nothing of the policy
            elif trajectory.reward.details.get("verifier_killed"):
                trajectory.failure_mode = "verifier_killed"
            elif trajectory.reward.details.get("verifier_ran") is False:
                trajectory.failure_mode = "verifier_unavailable"
            elif trajectory.reward.details.get("error") and trajectory.reward.details.get("reward_file") is None:
                trajectory.failure_mode = trajectory.failure_mode or "verifier_error"
        if not trajectory.reward.passed and trajectory.failure_mode is None:
            trajectory.failure_mode = "wrong_answer" if trajectory.stop_reason == "finish" else "gave_up"
    finally:
        _close_sandbox(episode)


def _close_sandbox(episode: _Episode) -> None:
    if episode.sandbox is None:
        return
    try:
        episode.sandbox.close()
    except (SandboxError, OSError):
        pass
