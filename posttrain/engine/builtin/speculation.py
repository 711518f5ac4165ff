"""When to speculate, and how far: per-sequence draft lengths and a per-step cost check.

Each decoding sequence keeps its own draft length, which follows its acceptance: doubled (up to
max_draft) when a whole draft was accepted, cut to one more than the accepted count otherwise.
Its acceptance rate a (a moving average) predicts how many draft tokens a draft of length k
will add: a + a^2 + ... + a^k.

Verifying drafts makes the forward pass longer. Whether that pays depends on the batch: at one
sequence a pass costs about the same for 1 or 9 tokens (reading the weights dominates); at 16
sequences the pass is already compute-bound and extra tokens cost their full price. So the
engine times every step and fits step seconds = fixed + per_token * tokens (a least-squares fit
over recent steps, forgetting old ones); a step speculates only when the predicted tokens per
second with the drafts beat the predicted tokens per second without them. At high concurrency
that turns speculation off, so the fast variant is never slower than the standard one.
"""

from __future__ import annotations

from dataclasses import dataclass

from posttrain.engine.builtin.drafters import OutputHistory, PromptLookup
from posttrain.engine.builtin.sequence import Sequence


@dataclass
class StepCost:
    """Exponentially weighted least squares of seconds = fixed + per_token * tokens."""

    decay: float = 0.98
    min_steps: float = 8.0  # before this much (decayed) evidence, no prediction
    weight: float = 0.0
    sum_x: float = 0.0
    sum_y: float = 0.0
    sum_xx: float = 0.0
    sum_xy: float = 0.0

    def record(self, tokens: int, seconds: float) -> None:
        d = self.decay
        self.weight = self.weight * d + 1
        self.sum_x = self.sum_x * d + tokens
        self.sum_y = self.sum_y * d + seconds
        self.sum_xx = self.sum_xx * d + tokens * tokens
        self.sum_xy = self.sum_xy * d + tokens * seconds

    def predict(self, tokens: int) -> float | None:
        """Predicted seconds of a step of `tokens` tokens; None until the fit has evidence
        (several steps of different sizes)."""
        if self.weight < self.min_steps:
            return None
        mean_x, mean_y = self.sum_x / self.weight, self.sum_y / self.weight
        variance = self.sum_xx / self.weight - mean_x * mean_x
        if variance < 0.25:
            return None
        slope = max((self.sum_xy / self.weight - mean_x * mean_y) / variance, 0.0)
        fixed = max(mean_y - slope * mean_x, 1e-9)
        return fixed + slope * tokens


@dataclass
class _SequenceState:
    drafter: PromptLookup
    draft_length: int
    acceptance: float = 0.5


class SpeculationPolicy:
    def __init__(self, max_draft: int = 8, history_tokens: int = 100_000) -> None:
        self.max_draft = max_draft
        self.history = OutputHistory(history_tokens)
        self.cost = StepCost()
        self._states: dict[int, _SequenceState] = {}

    def plan(self, decoding: list[Sequence], other_tokens: int, max_len: int) -> dict[int, list[int]]:
        """Drafts for this step's decoding sequences (seq id -> tokens), or none when they would
        not pay; `other_tokens`: the step's prefill tokens, computed either way."""
        drafts: dict[int, list[int]] = {}
        gain = 0.0
        for seq in decoding:
            state = self._states.get(seq.seq_id)
            if state is None:
                state = self._states[seq.seq_id] = _SequenceState(PromptLookup(), min(4, self.max_draft))
            room = min(seq.params.max_tokens - seq.num_completion_tokens, max_len - len(seq)) - 1
            k = min(state.draft_length, room)
            if k < 1:
                continue
            tokens = seq.token_ids
            n, draft = state.drafter.propose(tokens, k)
            history_n, history_draft = self.history.propose(tokens, k)
            if history_n > n or (history_n == n and len(history_draft) > len(draft)):
                draft = history_draft
            if not draft:
                continue
            drafts[seq.seq_id] = draft
            a = state.acceptance
            gain += sum(a**j for j in range(1, len(draft) + 1))
        if not drafts:
            return {}
        base = len(decoding) + other_tokens
        extra = sum(len(d) for d in drafts.values())
        plain_seconds, speculative_seconds = self.cost.predict(base), self.cost.predict(base + extra)
        if plain_seconds is None or speculative_seconds is None:
            return drafts  # not measured yet: speculating is how the fit sees larger steps
        plain_rate = len(decoding) / plain_seconds
        speculative_rate = (len(decoding) + gain) / speculative_seconds
        return drafts if speculative_rate > plain_rate else {}

    def observe(self, seq: Sequence, proposed: int, accepted: int) -> None:
        state = self._states.get(seq.seq_id)
        if state is None:
            return
        state.acceptance = 0.7 * state.acceptance + 0.3 * (accepted / proposed)
        if accepted == proposed:
            state.draft_length = min(self.max_draft, state.draft_length * 2)
        else:
            state.draft_length = max(1, accepted + 1)

    def finished(self, seq: Sequence) -> None:
        self._states.pop(seq.seq_id, None)
        if seq.finish_reason != "abort":
            self.history.add(seq.completion_token_ids)
