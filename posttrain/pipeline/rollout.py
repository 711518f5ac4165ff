"""Rollouts for single-reply tasks: prompt -> n completions -> verifier rewards."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from posttrain.engine.interface import Completion, GenerationRequest, InferenceEngine, SamplingParams
from posttrain.models.token_ids import chat_prompt_ids
from posttrain.tasks.records import Reward, Task
from posttrain.tasks.verifiers import score
from posttrain.train.samples import TrainSample


@dataclass
class RolloutGroup:
    """All samples of one prompt: the unit that group-relative advantages work on."""

    task: Task
    completions: list[Completion]
    rewards: list[Reward]
    # per completion, the trainer's (logprobs, entropies) of its tokens once it trained on it
    trainer_values: list[tuple[list[float], list[float] | None] | None] | None = None
    served_by: str = ""  # the engine replica that generated it ("SLOT@NODE"), with [engine] replicas

    @property
    def valid(self) -> list[bool]:
        """Per completion, whether it counts in the group's statistics: an answer always does."""
        return [True] * len(self.completions)

    def masked_reasons(self) -> list[str]:
        return []

    def train_samples(self, advantages: list[float]) -> list[TrainSample]:
        return [
            TrainSample(c.prompt_token_ids, c.token_ids, c.logprobs, float(a))
            for c, a in zip(self.completions, advantages)
        ]

    def generated_tokens(self) -> int:
        return sum(len(c.token_ids) for c in self.completions)

    def truncated(self) -> int:
        return sum(c.finish_reason == "length" for c in self.completions)

    def store_rows(self, advantages: list[float]):
        for index, (c, r, a) in enumerate(zip(self.completions, self.rewards, advantages)):
            yield {
                "task_id": self.task.id,
                "domain": self.task.domain,
                "sample_index": index,
                "policy_version": c.version,
                "prompt_token_ids": c.prompt_token_ids,
                "completion_token_ids": c.token_ids,
                "logprobs": c.logprobs,
                "text": c.text,
                "finish_reason": c.finish_reason,
                "reward": r.value,
                "passed": r.passed,
                "details": self._details(index, r),
                "advantage": float(a),
            }

    def take_trainer_values(self, by_tokens: dict) -> None:
        """Each completion's values from `by_tokens` ((prompt ids, completion ids) -> values)."""
        self.trainer_values = [by_tokens.get((tuple(c.prompt_token_ids), tuple(c.token_ids))) for c in self.completions]

    def _details(self, index: int, reward: Reward) -> dict:
        values = self.trainer_values[index] if self.trainer_values else None
        if values is None:
            return reward.details
        logprobs, entropy = values
        return {**reward.details, "trainer_logprobs": logprobs, **({"entropy": entropy} if entropy else {})}

    @property
    def reward_values(self) -> list[float]:
        return [r.value for r in self.rewards]


def attach_trainer_values(groups, samples: list[TrainSample], values: list) -> None:
    """The trainer's per-token values (PolicyTrainer.last_token_values, aligned with `samples`)
    onto the groups' completions, for the store. Matched by token ids: a completion the trainer
    did not see (its group was filtered out) gets none; equal ids have equal values."""
    by_tokens = {(tuple(s.prompt_ids), tuple(s.completion_ids)): v for s, v in zip(samples, values, strict=True) if v}
    for group in groups:
        group.take_trainer_values(by_tokens)


def prompt_token_ids(tokenizer, task: Task, system_prompt: str | None) -> list[int]:
    return chat_prompt_ids(tokenizer, task.messages(system_prompt))


def sample_seed(run_seed: int, step: int, slot: int) -> int:
    digest = hashlib.sha256(f"{run_seed}:{step}:{slot}".encode()).digest()
    return int.from_bytes(digest[:4], "little")


def generate_groups(
    engine: InferenceEngine,
    tokenizer,
    tasks: list[Task],
    params: SamplingParams,
    system_prompt: str | None,
    seed_for_slot=None,
) -> list[RolloutGroup]:
    requests = []
    for slot, task in enumerate(tasks):
        slot_params = params if seed_for_slot is None else _with_seed(params, seed_for_slot(slot))
        requests.append(
            GenerationRequest(f"{slot}:{task.id}", prompt_token_ids(tokenizer, task, system_prompt), slot_params)
        )
    completions = engine.generate(requests)
    groups = []
    for slot, task in enumerate(tasks):
        mine = completions[slot * params.n : (slot + 1) * params.n]
        groups.append(RolloutGroup(task, mine, [score(c.text, task) for c in mine]))
    return groups


def _with_seed(params: SamplingParams, seed: int) -> SamplingParams:
    from dataclasses import replace

    return replace(params, seed=seed)
