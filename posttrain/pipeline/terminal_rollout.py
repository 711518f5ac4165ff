"""Rollouts for terminal tasks: each task's group is `group_size` whole agent episodes run by
the policy being trained; the episode reward is the verifier's. Training sequences are the
episodes' token streams with a mask that keeps only the model's own tokens."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from posttrain.agent.loop import AgentConfig, run_episodes
from posttrain.agent.policies import ModelPolicy
from posttrain.agent.trajectory import Trajectory, training_segments
from posttrain.engine.interface import SamplingParams
from posttrain.tasks.records import Reward, Task
from posttrain.train.samples import TrainSample


@dataclass
class EpisodeGroup:
    """All episodes of one task in a step: the unit group-relative advantages work on."""

    task: Task
    trajectories: list[Trajectory]
    # per episode, the trainer's (logprobs, entropies) on its first training sequence (the tokens
    # a stored row holds), once it trained on it
    trainer_values: list[tuple[list[float], list[float] | None] | None] | None = None
    served_by: str = ""  # the engine replica that generated it ("SLOT@NODE"), with [engine] replicas

    @property
    def rewards(self) -> list[Reward]:
        return [t.reward or Reward(value=0.0, passed=False) for t in self.trajectories]

    @property
    def reward_values(self) -> list[float]:
        return [r.value for r in self.rewards]

    @property
    def valid(self) -> list[bool]:
        """Per episode, False where it measured the infrastructure (INFRA_FAILURES), not the policy."""
        return [not t.infra_failed for t in self.trajectories]

    def masked_reasons(self) -> list[str]:
        return [t.failure_mode for t in self.trajectories if t.infra_failed]

    def train_samples(self, advantages: list[float]) -> list[TrainSample]:
        """Every valid episode's training sequences; an infra-failed one gives none."""
        samples = []
        for trajectory, advantage in zip(self.trajectories, advantages):
            if trajectory.infra_failed:
                continue
            for segment in training_segments(trajectory.turns):
                samples.append(
                    TrainSample(
                        segment.prompt_ids,
                        segment.completion_ids,
                        segment.logprobs,
                        float(advantage),
                        segment.completion_mask,
                    )
                )
        return samples

    def generated_tokens(self) -> int:
        return sum(t.completion_tokens for t in self.trajectories)

    def truncated(self) -> int:
        return sum(t.stop_reason in ("max_steps", "max_tokens", "timeout") for t in self.trajectories)

    def take_trainer_values(self, by_tokens: dict) -> None:
        """Each episode's first training sequence's values from `by_tokens` ((prompt ids,
        completion ids) -> values); tokens the model did not write (tool observations, turn
        headers: mask 0) get the engine's 0.0 logprob and no entropy, as they are not trained."""
        self.trainer_values = []
        for trajectory in self.trajectories:
            segments = training_segments(trajectory.turns)
            values = (
                by_tokens.get((tuple(segments[0].prompt_ids), tuple(segments[0].completion_ids))) if segments else None
            )
            if values is not None:
                own = segments[0].completion_mask
                logprobs, entropy = values
                values = (
                    [lp if m else 0.0 for lp, m in zip(logprobs, own, strict=True)],
                    [e if m else 0.0 for e, m in zip(entropy, own, strict=True)] if entropy else None,
                )
            self.trainer_values.append(values)

    def store_rows(self, advantages: list[float]):
        for index, (trajectory, advantage) in enumerate(zip(self.trajectories, advantages)):
            segments = training_segments(trajectory.turns)
            first = segments[0] if segments else None
            details = trajectory.to_dict()
            details.pop("turns")
            # asdict, not vars: a turn's tool calls are dataclasses too, and stored as JSON objects
            # (vars left them to json.dumps(default=str), which stored their repr strings)
            details["turns"] = [
                {k: v for k, v in asdict(t).items() if k not in ("prompt_ids",)} for t in trajectory.turns
            ]
            values = self.trainer_values[index] if self.trainer_values else None
            if values is not None:
                details["trainer_logprobs"] = values[0]
                if values[1]:
                    details["entropy"] = values[1]
            yield {
                "task_id": self.task.id,
                "domain": self.task.domain,
                "sample_index": index,
                "policy_version": trajectory.turns[0].token_versions[0]
                if trajectory.turns and trajectory.turns[0].token_versions
                else 0,
                "prompt_token_ids": first.prompt_ids if first else [],
                "completion_token_ids": first.completion_ids if first else [],
                "logprobs": first.logprobs if first else [],
                "text": "\n".join(t.text for t in trajectory.turns),
                "finish_reason": trajectory.stop_reason,
                "reward": trajectory.reward.value if trajectory.reward else 0.0,
                "passed": bool(trajectory.reward and trajectory.reward.passed),
                "details": details,
                "advantage": float(advantage),
            }


def run_terminal_groups(
    engine, tokenizer, tasks: list[Task], group_size: int, params: SamplingParams, agent: AgentConfig, seed: int
) -> list[EpisodeGroup]:
    """group_size episodes per task, all stepped together (one engine batch per turn)."""
    policy = ModelPolicy(engine, tokenizer, params, seed=seed)
    episodes = [task for task in tasks for _ in range(group_size)]
    trajectories = run_episodes(episodes, policy, tokenizer, agent)
    return [EpisodeGroup(task, trajectories[i * group_size : (i + 1) * group_size]) for i, task in enumerate(tasks)]
