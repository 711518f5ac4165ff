"""Who decides the agent's next move.

A policy turns the context's prompt into a reply. Replies are batched: `act` takes every live
episode's prompt at once, so a model policy sends them to the engine in one call and
continuous batching and the prefix cache work across episodes.

    ModelPolicy     any InferenceEngine backend; tool calls parsed from the model's text
    OraclePolicy    uploads the task's solution/ and runs solution/solve.sh, then finishes
    NopPolicy       finishes at once without touching anything
    ScriptedPolicy  replays given replies (raw text, so tests can send malformed calls)
    DemonstrationPolicy  the task's reference steps as the model would send them: one bash
                    call per turn, then finish, as token ids (a supervised warm start trains on them)
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field, replace
from pathlib import Path

from posttrain.agent.tool_calls import format_call
from posttrain.engine.interface import GenerationRequest, SamplingParams
from posttrain.errors import TaskSourceError
from posttrain.models.chat_tokens import ChatTokens


@dataclass
class Reply:
    text: str
    token_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    token_versions: list[int] = field(default_factory=list)
    cached_prompt_tokens: int = 0


@dataclass
class EpisodeView:
    """What a policy may look at: the task, its prompt tokens and turn number."""

    task: object
    prompt_ids: list[int]
    turn: int
    sandbox: object = None
    workdir: str = "/app"
    seed: int | None = None  # the episode's: a reply's randomness depends on (seed, turn) only
    messages: list[dict] | None = None  # the prompt as chat messages (sent to remote chat APIs)


class Policy:
    name = "policy"
    uses_model = False  # True: replies are model tokens, to be trained on

    def begin(self, view: EpisodeView) -> None:
        """Called once per episode, before the first turn (the sandbox is ready)."""

    def act(self, views: list[EpisodeView]) -> list[Reply]:
        raise NotImplementedError


class ModelPolicy(Policy):
    name = "model"
    uses_model = True

    def __init__(self, engine, tokenizer, params: SamplingParams, seed: int | None = None) -> None:
        self.engine = engine
        self.tokenizer = tokenizer
        self.params = params
        self.seed = seed
        self._calls = 0

    def act(self, views: list[EpisodeView]) -> list[Reply]:
        requests = []
        for index, view in enumerate(views):
            params = replace(self.params, n=1)
            if view.seed is not None:  # reproducible whatever else shares the batch (resumable evals)
                params = replace(params, seed=(view.seed * 1_000_003 + view.turn) % (2**62))
            elif self.seed is not None:
                params = replace(params, seed=self.seed * 1_000_003 + self._calls * 1009 + index)
            requests.append(GenerationRequest(f"agent-{self._calls}-{index}", view.prompt_ids, params, view.messages))
        self._calls += 1
        completions = self.engine.generate(requests)
        return [
            Reply(c.text, list(c.token_ids), list(c.logprobs), list(c.token_versions), c.cached_prompt_tokens or 0)
            for c in completions
        ]


def solution_command(task) -> str:
    """The shell command that runs an uploaded solution/solve.sh with the task's solution env."""
    env = task.metadata.get("solution_env") or {}
    exports = "".join(f"export {k}={shlex.quote(str(v))}; " for k, v in env.items())
    return f"{exports}bash /solution/solve.sh"


class OraclePolicy(Policy):
    """Runs the reference solution, the way Harbor's oracle agent does."""

    name = "oracle"

    def act(self, views: list[EpisodeView]) -> list[Reply]:
        replies = []
        for view in views:
            if view.turn == 0:
                solution = getattr(view.task, "solution", None)
                if not solution:
                    replies.append(Reply(format_call("finish", {"summary": "this task has no solution/"})))
                    continue
                view.sandbox.upload(Path(solution), "/solution")
                timeout = float(view.task.limits.agent_timeout_s)
                replies.append(
                    Reply(
                        format_call("bash", {"command": solution_command(view.task), "timeout_s": min(timeout, 600.0)})
                    )
                )
            else:
                replies.append(Reply(format_call("finish", {"summary": "ran solution/solve.sh"})))
        return replies


class NopPolicy(Policy):
    name = "nop"

    def act(self, views: list[EpisodeView]) -> list[Reply]:
        return [Reply(format_call("finish", {"summary": "did nothing"})) for _ in views]


class ScriptedPolicy(Policy):
    """Replies from a list, one per turn (the same script for every episode); then finishes."""

    name = "scripted"

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)

    def act(self, views: list[EpisodeView]) -> list[Reply]:
        return [Reply(self.replies[v.turn] if v.turn < len(self.replies) else format_call("finish", {})) for v in views]


def reference_steps(task) -> list[str]:
    """The task's reference solution as bash commands, one per tool call: from the generator
    (`metadata["reference_steps"]`) or the task's solution/steps.json."""
    steps = task.metadata.get("reference_steps")
    where = f"task {task.id}: metadata reference_steps"
    if steps is None and getattr(task, "solution", None):
        file = Path(task.solution) / "steps.json"
        if file.is_file():
            where = str(file)
            try:
                steps = json.loads(file.read_text())
            except json.JSONDecodeError as exc:
                raise TaskSourceError(f"{file}: not valid JSON ({exc.msg})") from None
    if steps is None:
        raise TaskSourceError(
            f"task {task.id}: no reference steps to demonstrate (a generated task has them; a Harbor task "
            "needs solution/steps.json, a JSON list of bash commands)"
        )
    if not isinstance(steps, list) or not steps or not all(isinstance(c, str) and c.strip() for c in steps):
        raise TaskSourceError(f"{where}: must be a non-empty list of bash commands")
    return steps


class DemonstrationPolicy(Policy):
    """Replays each task's reference steps in the agent's own format: turn k sends step k as one
    bash call, the turn after the last step calls finish. The replies carry token ids exactly as
    a model would have produced them (the text, then the end-of-turn token), so an episode's
    training segments are a demonstration in the agent loop's token format."""

    name = "demonstration"
    uses_model = True  # its replies are tokens to train on

    def __init__(self, tokenizer) -> None:
        self.chat = ChatTokens(tokenizer)
        self.stop = self.chat.end_of_turn[:1]

    def act(self, views: list[EpisodeView]) -> list[Reply]:
        replies = []
        for view in views:
            steps = reference_steps(view.task)
            if view.turn < len(steps):
                text = format_call("bash", {"command": steps[view.turn]})
            else:
                text = format_call("finish", {})
            ids = self.chat.encode(text) + self.stop
            replies.append(Reply(text, ids, [0.0] * len(ids)))  # not sampled: no engine logprobs
        return replies
