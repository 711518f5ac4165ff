"""The inference-engine interface every backend implements (hf now; builtin, vllm, openai later)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal, Protocol

import torch

FinishReason = Literal["stop", "length", "abort"]


@dataclass(frozen=True)
class SamplingParams:
    """How to sample. Logprobs are reported under the temperature-scaled distribution
    (log_softmax(logits / temperature)), before top-p/top-k truncation, which is what the
    trainer recomputes; temperature 0 means greedy and reports log_softmax(logits)."""

    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    max_tokens: int = 64
    stop: tuple[str, ...] = ()
    stop_token_ids: tuple[int, ...] = ()
    seed: int | None = None
    top_logprobs: int = 0  # also report this many most likely tokens at each position

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError(f"SamplingParams.n must be >= 1, got {self.n}")
        if self.temperature < 0:
            raise ValueError(f"SamplingParams.temperature must be >= 0, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"SamplingParams.top_p must be in (0, 1], got {self.top_p}")
        if self.top_k < 0:
            raise ValueError(f"SamplingParams.top_k must be >= 0 (0 = off), got {self.top_k}")
        if self.max_tokens < 1:
            raise ValueError(f"SamplingParams.max_tokens must be >= 1, got {self.max_tokens}")
        if self.top_logprobs < 0:
            raise ValueError(f"SamplingParams.top_logprobs must be >= 0, got {self.top_logprobs}")


@dataclass
class GenerationRequest:
    request_id: str
    prompt_token_ids: list[int]
    params: SamplingParams = field(default_factory=SamplingParams)
    # the chat conversation the prompt renders, where the caller knows it: an engine that talks
    # to a remote chat API sends these instead of token ids (local engines use the ids)
    messages: list[dict] | None = None


@dataclass
class Completion:
    """One sample. `token_ids` are exactly what the trainer trains on; `logprobs[i]` is the
    engine's logprob of `token_ids[i]`; `version` is the policy version that produced them."""

    request_id: str
    sample_index: int
    prompt_token_ids: list[int]
    token_ids: list[int]
    logprobs: list[float]
    finish_reason: FinishReason
    text: str
    version: int
    token_versions: list[int] = field(default_factory=list)
    cached_prompt_tokens: int | None = None  # prompt tokens served from a prefix cache (None: not reported)
    top_logprobs: list[list[tuple[int, float]]] | None = None  # per token, when params.top_logprobs > 0

    def __post_init__(self) -> None:
        if not self.token_versions:
            self.token_versions = [self.version] * len(self.token_ids)


class InferenceEngine(Protocol):
    """generate() is synchronous and returns, for each request, `params.n` completions in
    request order then sample order."""

    version: int

    def generate(self, requests: list[GenerationRequest]) -> list[Completion]: ...

    def update_weights(self, named_tensors: Iterable[tuple[str, torch.Tensor]], version: int) -> None: ...
