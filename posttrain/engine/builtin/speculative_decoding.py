"""Speculative decoding as one hook on the engine's step; plain decoding's hook does nothing.

The engine (engine.py) calls its hook at fixed points of a step:

- `draft`, before the schedule: each decoding sequence may get guesses in `seq.draft`. The
  scheduler budgets them with the sequence's last known token, and the model runner scores
  them in the same pass, returning 1 + len(draft) rows of logits for the sequence.
- `verify`, in the postprocess, for each sequence that carried a draft: which guesses to keep,
  and one more token (draft_verification.py), counted into the acceptance statistics.
- `step_done`, after the postprocess: the step's speed, which informs the next choice of
  whether to draft at this batch size.
- `finished`, when a sequence ends (finished or aborted).

What to draft, and whether, is SpeculationPolicy's (speculation.py).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import torch

from posttrain.engine.builtin.draft_verification import verify_draft
from posttrain.engine.builtin.speculation import SpeculationPolicy

if TYPE_CHECKING:
    from posttrain.engine.builtin.decode_cache import DecodeCache
    from posttrain.engine.builtin.engine import EngineStats
    from posttrain.engine.builtin.scheduler import ScheduledChunk, Scheduler
    from posttrain.engine.builtin.sequence import Sequence


class PlainDecoding:
    """No drafts: every sequence whose known tokens are computed samples one token a step."""

    def draft(self, scheduler: Scheduler) -> None:
        pass

    def verify(self, seq: Sequence, logits: torch.Tensor) -> tuple[list[int], list[float]]:
        raise RuntimeError("plain decoding drafts nothing, so it has nothing to verify")

    def step_done(self, chunks: list[ScheduledChunk]) -> None:
        pass

    def finished(self, seq: Sequence) -> None:
        pass


class SpeculativeDecoding(PlainDecoding):
    """N-gram drafts verified in the step's own pass: lossless, and off for steps where the
    policy's measurements say it would not pay."""

    def __init__(self, stats: EngineStats, decode_cache: DecodeCache, max_len: int) -> None:
        self.policy = SpeculationPolicy()
        self.stats = stats
        self.decode_cache = decode_cache
        self.max_len = max_len
        self._started = 0.0
        self._generated_before = 0
        self._growths_before = 0

    def draft(self, scheduler: Scheduler) -> None:
        """Drafts for the running sequences that decode (one known token left to compute);
        none for the others."""
        self._started, self._generated_before = time.perf_counter(), self.stats.generated_tokens
        self._growths_before = self.decode_cache.growths
        decoding = []
        for seq in scheduler.running:
            seq.draft = []
            if seq.num_uncomputed == 1 and seq.num_completion_tokens > 0:
                decoding.append(seq)
        if not decoding:
            return
        prefilling = bool(scheduler.waiting) or len(decoding) < len(scheduler.running)
        drafts = self.policy.plan(decoding, self.max_len, measured=not prefilling)
        for seq in decoding:
            seq.draft = drafts.get(seq.seq_id, [])

    def verify(self, seq: Sequence, logits: torch.Tensor) -> tuple[list[int], list[float]]:
        """logits: the 1 + len(seq.draft) rows the pass gave the sequence. Returns the tokens to
        append (the kept drafts, then one more) and their logprobs; clears the draft."""
        draft, seq.draft = seq.draft, []
        tokens, logprobs = verify_draft(logits, draft, seq.params, seq.generator)
        accepted = len(tokens) - 1
        self.stats.draft_tokens += len(draft)
        self.stats.accepted_draft_tokens += accepted
        self.policy.observe(seq, len(draft), accepted)
        return tokens, logprobs

    def step_done(self, chunks: list[ScheduledChunk]) -> None:
        """A pure decode step's tokens per second, with or without drafts, inform the next
        choice. Not a step that also prefilled (its time is mostly the prompt's), nor one that
        grew the decode cache: a one-off allocation, up to a second, would condemn whichever
        choice it happened to, the untried drafts first."""
        pure_decode = all(c.num_tokens - c.num_draft == 1 for c in chunks)
        if not pure_decode or self.decode_cache.growths != self._growths_before:
            return
        self.policy.rates.record(
            len(chunks),
            any(c.num_draft for c in chunks),
            self.stats.generated_tokens - self._generated_before,
            time.perf_counter() - self._started,
        )

    def finished(self, seq: Sequence) -> None:
        self.policy.finished(seq)
