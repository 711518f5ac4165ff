"""What the trainer learns from: the record rollouts hand over and the trainer consumes. Kept
apart from the trainer so that rollout code (which runs in workers) never imports it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class TrainSample:
    """One completion to learn from: prompt + completion token ids as the engine produced them.
    `completion_mask` (multi-turn episodes) is 1 on the model's own tokens and 0 on the tool
    observations between them: those are context, never trained on; None means all 1."""

    prompt_ids: list[int]
    completion_ids: list[int]
    engine_logprobs: list[float]
    advantage: float
    completion_mask: list[int] | None = None

    @property
    def trained_tokens(self) -> int:
        return sum(self.completion_mask) if self.completion_mask is not None else len(self.completion_ids)

    @property
    def length(self) -> int:
        return len(self.prompt_ids) + len(self.completion_ids)
