"""A sequence: one sample of one request, its tokens, its KV blocks and its progress."""

from __future__ import annotations

from enum import Enum, auto

import torch

from posttrain.engine.interface import SamplingParams


class SequenceStatus(Enum):
    WAITING = auto()
    RUNNING = auto()
    FINISHED = auto()


class Sequence:
    def __init__(
        self,
        seq_id: int,
        request_id: str,
        sample_index: int,
        prompt_token_ids: list[int],
        params: SamplingParams,
        block_size: int,
        arrival: int,
    ) -> None:
        self.seq_id = seq_id
        self.request_id = request_id
        self.sample_index = sample_index
        self.params = params
        self.block_size = block_size
        self.arrival = arrival
        self.token_ids = list(prompt_token_ids)
        self.num_prompt_tokens = len(prompt_token_ids)
        self.num_computed_tokens = 0  # tokens whose KV is in the cache
        self.num_cached_prompt_tokens = 0  # of those, served by the prefix cache
        self.block_table: list[int] = []
        self.logprobs: list[float] = []
        self.top_logprobs: list[list[tuple[int, float]]] = []
        self.draft: list[int] = []  # speculative tokens to verify in the next step (not yet tokens)
        self.token_versions: list[int] = []
        self.status = SequenceStatus.WAITING
        self.finish_reason: str | None = None
        self.preemptions = 0
        self.generator: torch.Generator | None = None
        if params.seed is not None:
            self.generator = torch.Generator().manual_seed((params.seed * 1_000_003 + sample_index) % (2**63))

    def __len__(self) -> int:
        return len(self.token_ids)

    @property
    def completion_token_ids(self) -> list[int]:
        return self.token_ids[self.num_prompt_tokens :]

    @property
    def num_completion_tokens(self) -> int:
        return len(self.token_ids) - self.num_prompt_tokens

    @property
    def num_uncomputed(self) -> int:
        return len(self.token_ids) - self.num_computed_tokens

    def blocks_needed(self, num_tokens: int) -> int:
        return (num_tokens + self.block_size - 1) // self.block_size

    def block_tokens(self, index: int) -> list[int]:
        return self.token_ids[index * self.block_size : (index + 1) * self.block_size]

    def append(self, token_id: int, logprob: float, version: int) -> None:
        self.token_ids.append(token_id)
        self.logprobs.append(logprob)
        self.token_versions.append(version)

    @property
    def is_finished(self) -> bool:
        return self.status == SequenceStatus.FINISHED
