"""Held-out evaluation: greedy replies to every held-out item, accuracy (pass rate) per domain."""

from __future__ import annotations

from dataclasses import dataclass, field

from posttrain.agent.loop import AgentConfig, run_episodes
from posttrain.agent.policies import ModelPolicy
from posttrain.engine.interface import InferenceEngine, SamplingParams
from posttrain.pipeline.rollout import generate_groups
from posttrain.tasks.records import Task

MAX_LIVE_EPISODES = 128  # sandboxes open at once; the builtin engine decodes up to 128 sequences together


@dataclass
class EvalResult:
    per_item: dict[str, float]  # task id -> 1.0 if passed else 0.0
    per_domain: dict[str, float]
    overall: float
    per_family: dict[str, float] = field(default_factory=dict)  # generated terminal tasks, by family
    per_item_reward: dict[str, float] = field(default_factory=dict)  # answer tasks: the reward itself
    per_item_valid: dict[str, float] = field(default_factory=dict)  # verifiers with a validity gate (scene)
    # generated terminal tasks: pass@1 by the number of commands the reference solution takes
    per_steps_needed: dict[str, float] = field(default_factory=dict)
    # agent episodes: turns taken and the context's length at the end (mean and max)
    episodes: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "overall": self.overall,
            "per_domain": self.per_domain,
            "per_family": self.per_family,
            "per_item": self.per_item,
            "per_item_reward": self.per_item_reward,
            "per_item_valid": self.per_item_valid,
            "per_steps_needed": self.per_steps_needed,
            "episodes": self.episodes,
        }

    @classmethod
    def from_json(cls, data: dict) -> EvalResult:
        return cls(
            per_item=data["per_item"],
            per_domain=data["per_domain"],
            overall=data["overall"],
            per_family=data.get("per_family", {}),
            per_item_reward=data.get("per_item_reward", {}),
            per_item_valid=data.get("per_item_valid", {}),
            per_steps_needed=data.get("per_steps_needed", {}),
            episodes=data.get("episodes", {}),
        )


def evaluate(
    engine: InferenceEngine,
    tokenizer,
    tasks: list[Task],
    max_tokens: int,
    system_prompt: str | None,
    batch_size: int = 64,
    on_progress=None,
    agent: AgentConfig | None = None,
) -> EvalResult:
    """Answer tasks: one greedy reply each. Terminal tasks: one greedy agent episode each,
    passed when the task's verifier says so."""
    params = SamplingParams(n=1, temperature=0.0, max_tokens=max_tokens)
    per_item: dict[str, float] = {}
    per_item_reward: dict[str, float] = {}
    per_item_valid: dict[str, float] = {}
    by_domain: dict[str, list[float]] = {}
    by_family: dict[str, list[float]] = {}
    by_steps: dict[int, list[float]] = {}
    turns: list[int] = []
    context: list[int] = []
    terminal = [t for t in tasks if t.kind == "terminal"]
    if terminal:
        agent = agent or AgentConfig()
        policy = ModelPolicy(engine, tokenizer, SamplingParams(n=1, temperature=0.0, max_tokens=agent.reply_tokens))
        for trajectory, task in zip(
            run_episodes(
                terminal,
                policy,
                tokenizer,
                agent,
                on_episode_end=(lambda _: on_progress(1)) if on_progress else None,
                max_live=MAX_LIVE_EPISODES,
            ),
            terminal,
        ):
            value = float(bool(trajectory.reward and trajectory.reward.passed))
            per_item[task.id] = value
            by_domain.setdefault(task.domain, []).append(value)
            if task.metadata.get("family"):
                by_family.setdefault(task.metadata["family"], []).append(value)
            if task.metadata.get("reference_steps"):
                by_steps.setdefault(len(task.metadata["reference_steps"]), []).append(value)
            turns.append(len(trajectory.turns))
            context.append(trajectory.final_context_tokens)
    answer = [t for t in tasks if t.kind != "terminal"]
    for start in range(0, len(answer), batch_size):
        chunk = answer[start : start + batch_size]
        for group in generate_groups(engine, tokenizer, chunk, params, system_prompt):
            # Accuracy counts passes: some verifiers give partial credit (reasoning-gym scores a
            # well-formed wrong answer 0.01), which is a training signal, not a correct answer.
            reward = group.rewards[0]
            value = float(reward.passed)
            per_item[group.task.id] = value
            per_item_reward[group.task.id] = float(reward.value)
            if "valid" in reward.details:
                per_item_valid[group.task.id] = float(bool(reward.details["valid"]))
            by_domain.setdefault(group.task.domain, []).append(value)
        if on_progress:
            on_progress(len(chunk))
    per_domain = {d: sum(v) / len(v) for d, v in sorted(by_domain.items())}
    overall = sum(per_item.values()) / max(len(per_item), 1)
    per_family = {f: sum(v) / len(v) for f, v in sorted(by_family.items())}
    per_steps_needed = {str(n): sum(v) / len(v) for n, v in sorted(by_steps.items())}
    episodes = (
        {
            "mean_turns": sum(turns) / len(turns),
            "mean_context_tokens": sum(context) / len(context),
            "max_context_tokens": float(max(context)),
        }
        if turns
        else {}
    )
    return EvalResult(
        per_item=per_item,
        per_domain=per_domain,
        overall=overall,
        per_family=per_family,
        per_item_reward=per_item_reward,
        per_item_valid=per_item_valid,
        per_steps_needed=per_steps_needed,
        episodes=episodes,
    )
