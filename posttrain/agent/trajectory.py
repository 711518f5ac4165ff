"""What one agent episode leaves behind: token-in-token-out turns, tool calls, observations,
timings, error codes, snapshots, context decisions, the reward and the failure mode."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from posttrain.tasks.records import Reward


@dataclass
class ToolCallRecord:
    name: str
    arguments: Any
    observation: str
    error: str | None  # an ErrorCode value
    exit_code: int | None
    duration_s: float
    attempts: int = 1  # more than one: retried after a transient error
    fallback: str | None = None  # the path taken instead, when the first one failed


@dataclass
class TurnRecord:
    index: int
    prompt_ids: list[int]
    completion_ids: list[int]
    logprobs: list[float]
    token_versions: list[int]
    text: str
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    generate_s: float = 0.0
    tools_s: float = 0.0
    cached_prompt_tokens: int = 0  # prompt tokens the engine served from its prefix cache
    snapshot_id: str | None = None  # a checkpoint taken after this turn
    restored_snapshot: str | None = None  # a rollback made in this turn
    events: list[str] = field(default_factory=list)


# failure modes that measured the infrastructure, not the policy: the sandbox died or could not
# start, the engine failed mid-episode (a step raised, its process or replica died), the verifier
# could not run or was killed from outside mid-run. Training leaves such episodes out of their
# group's statistics. A verifier that ran and failed (`verifier_error`, `verifier_timeout`) is not one.
INFRA_FAILURES = frozenset(
    {"sandbox_died", "environment_error", "engine_error", "verifier_unavailable", "verifier_killed"}
)


@dataclass
class Trajectory:
    task_id: str
    policy: str
    turns: list[TurnRecord] = field(default_factory=list)
    reward: Reward | None = None
    failure_mode: str | None = None  # None when the episode ended normally
    stop_reason: str = ""  # finish | no_tool_call | max_steps | max_tokens | timeout | cost | error
    duration_s: float = 0.0  # the agent phase: first prompt to stop
    setup_s: float = 0.0  # environment build (or cache hit) and sandbox start
    verifier_s: float = 0.0
    cost: float = 0.0
    context_events: list[dict] = field(default_factory=list)
    error: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def infra_failed(self) -> bool:
        return self.failure_mode in INFRA_FAILURES

    @property
    def prompt_tokens(self) -> int:
        return sum(len(t.prompt_ids) for t in self.turns)

    @property
    def completion_tokens(self) -> int:
        return sum(len(t.completion_ids) for t in self.turns)

    @property
    def final_context_tokens(self) -> int:
        """The context at the episode's end: the last turn's prompt and reply (0 for no turn)."""
        if not self.turns:
            return 0
        return len(self.turns[-1].prompt_ids) + len(self.turns[-1].completion_ids)

    @property
    def prefix_hit_rate(self) -> float:
        total = self.prompt_tokens
        return sum(t.cached_prompt_tokens for t in self.turns) / total if total else 0.0

    @property
    def tool_calls(self) -> list[ToolCallRecord]:
        return [c for t in self.turns for c in t.tool_calls]

    def summary(self) -> dict:
        calls = self.tool_calls
        return {
            "task_id": self.task_id,
            "policy": self.policy,
            "reward": self.reward.value if self.reward else None,
            "passed": bool(self.reward and self.reward.passed),
            "failure_mode": self.failure_mode,
            "stop_reason": self.stop_reason,
            "turns": len(self.turns),
            "tool_calls": len(calls),
            "tool_errors": sum(1 for c in calls if c.error and c.error != "output_truncated"),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "prefix_hit_rate": self.prefix_hit_rate,
            "duration_s": self.duration_s,
            "cost": self.cost,
        }

    def to_dict(self) -> dict:
        data = asdict(self)
        data["reward"] = self.reward.model_dump() if self.reward else None
        data["summary"] = self.summary()
        return data


@dataclass
class TrainingSegment:
    """One training sequence: prompt, then the tokens after it with a mask that is 1 on the
    model's own tokens only (observations and turn headers are context, not trained on)."""

    prompt_ids: list[int]
    completion_ids: list[int]
    completion_mask: list[int]
    logprobs: list[float]  # the engine's, 0.0 where the mask is 0


def training_segments(turns: list[TurnRecord]) -> list[TrainingSegment]:
    """Turns as few sequences as possible: a turn joins the previous segment when its prompt
    extends that segment token for token (no pruning, no scratch in between), so an unpruned
    episode is one sequence and the trainer sees each token once, with the context it was
    generated in."""
    segments: list[TrainingSegment] = []
    for turn in turns:
        if not turn.completion_ids:
            continue
        current = segments[-1] if segments else None
        if current is not None:
            so_far = current.prompt_ids + current.completion_ids
            if turn.prompt_ids[: len(so_far)] == so_far:
                between = turn.prompt_ids[len(so_far) :]
                current.completion_ids += between + turn.completion_ids
                current.completion_mask += [0] * len(between) + [1] * len(turn.completion_ids)
                current.logprobs += [0.0] * len(between) + list(turn.logprobs)
                continue
        segments.append(
            TrainingSegment(
                list(turn.prompt_ids), list(turn.completion_ids), [1] * len(turn.completion_ids), list(turn.logprobs)
            )
        )
    return segments
