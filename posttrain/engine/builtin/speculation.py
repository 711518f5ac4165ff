"""When to speculate, and how far: per-sequence draft lengths, a gate on each draft token's
expected acceptance, and a measured per-step choice. Figures: docs/BENCHMARKS.md.

Each decoding sequence keeps its own draft length, which follows its acceptance: doubled (up to
max_draft) when a whole draft was accepted, cut to one more than the accepted count otherwise.

Verifying drafts makes the forward pass longer, and whether that pays depends on the batch: at
one sequence a pass costs about the same for 1 or 9 tokens (reading the weights dominates); at
many sequences the pass is compute-bound, extra tokens cost their full price, and a verify step
also gives up the decode fast path (its attention gathers the context from the paged cache).
No formula captures all of that on every CPU, so the policy measures it: for each batch size
(in powers of two) it keeps the tokens per second of pure decode steps with and without drafts
(moving averages), speculates only where speculating has been faster, and now and then tries
the other choice once to follow drift (contexts grow, acceptance changes): EXPLORE_EVERY steps
after a new verdict, then twice as long after each re-check that keeps it, up to
MAX_EXPLORE_EVERY, since a re-check of drafting where it does not pay costs a slow step. A
choice not yet measured is tried first. So at high concurrency, where drafts do not pay,
speculation switches itself off after a few steps.

A step that also prefills a prompt (a request arriving while others decode) is not measured:
its time is mostly the prompt's. It drafts only where drafting is the standing verdict for its
batch size, and neither explores nor advances the re-check schedule. The alternatives did worse
in paired runs: following the untried or re-checked choice in such steps, never drafting in
them (worse at 4 clients), and drafting in them where pure decode steps rarely measure (at 16
clients they carry 12-15 decoding sequences, a bucket that pure decode steps of 16 seldom
visit; there their draft tokens cost more than in a pure decode step, and fewer were accepted).

Measuring alone is not enough at high concurrency: a step's tokens per second rewards extra
tokens to any sequence, but when a pass costs nearly the same for 1 or 16 sequences a batch
finishes when its slowest sequence does, and every draft token makes every sequence's step a
little slower (verify steps pad every sequence's attention to the longest draft). So each draft
token is also gated by its expected acceptance: a sequence keeps an estimate of how often its
draft tokens are accepted (a moving average, starting from the engine-wide one), and drafts
only the tokens whose chance of acceptance (estimate ** position) is at least
batch / (batch + BREAK_EVEN_BATCH): none needed at one sequence, 0.5 at 16. Where drafts are
rarely accepted (short chat answers) a large batch then drafts almost nothing and costs what
plain decoding costs; agents, whose drafts are mostly accepted, keep theirs.

The bar is a constant, not measured: a bar computed from the moving averages (the seconds a
draft token adds to a step over the seconds a plain step spends per token) rises to 1 at 16
sequences, which the on/off choice above does anyway, and paired serving runs showed no gain
over the constant.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from posttrain.engine.builtin.drafters import OutputHistory, PromptLookup
from posttrain.engine.builtin.sequence import Sequence

EXPLORE_EVERY = 16
MAX_EXPLORE_EVERY = 128
# the batch size at which a draft token must be accepted half the time to be worth its cost
BREAK_EVEN_BATCH = 16
ACCEPTANCE_SMOOTHING = 0.3


@dataclass
class DecodeRates:
    """Tokens per second of decode steps, by batch-size bucket, with and without drafts."""

    smoothing: float = 0.3
    rates: dict[tuple[int, bool], float] = field(default_factory=dict)
    steps: dict[int, int] = field(default_factory=dict)
    better: dict[int, bool] = field(default_factory=dict)  # the verdict: is speculating faster
    interval: dict[int, int] = field(default_factory=dict)  # steps between re-checks of it
    next_check: dict[int, int] = field(default_factory=dict)

    @staticmethod
    def bucket(batch: int) -> int:
        return batch.bit_length()

    def choose(self, batch: int) -> bool:
        """Whether this step should speculate."""
        bucket = self.bucket(batch)
        step = self.steps.get(bucket, 0)
        self.steps[bucket] = step + 1
        speculative, plain = self.rates.get((bucket, True)), self.rates.get((bucket, False))
        if speculative is None or plain is None:
            return speculative is None
        better = speculative > plain
        if self.better.get(bucket) != better:  # a new verdict: re-check it soon
            self.better[bucket] = better
            self.interval[bucket] = EXPLORE_EVERY
            self.next_check[bucket] = step + EXPLORE_EVERY - 1
        if step < self.next_check[bucket]:
            return better
        # re-check the other choice; each re-check that keeps the verdict doubles the wait
        self.interval[bucket] = min(2 * self.interval[bucket], MAX_EXPLORE_EVERY)
        self.next_check[bucket] = step + self.interval[bucket]
        return not better

    def verdict(self, batch: int) -> bool:
        """Whether speculating has measured faster at this batch size, without exploring or
        advancing the re-check schedule: False until both choices are measured."""
        return self.better.get(self.bucket(batch), False)

    def record(self, batch: int, speculated: bool, tokens: int, seconds: float) -> None:
        key = (self.bucket(batch), speculated)
        rate = tokens / max(seconds, 1e-9)
        old = self.rates.get(key)
        self.rates[key] = rate if old is None else (1 - self.smoothing) * old + self.smoothing * rate


def min_acceptance(batch: int) -> float:
    """The chance of acceptance a draft token needs in a batch of this size."""
    return batch / (batch + BREAK_EVEN_BATCH) if batch > 1 else 0.0


def worth_drafting(acceptance: float, batch: int, k: int) -> int:
    """How many of k draft tokens pass the gate: token i is accepted with ~acceptance ** i."""
    threshold = min_acceptance(batch)
    chance, worth = acceptance, 0
    while worth < k and chance >= threshold:
        worth, chance = worth + 1, chance * acceptance
    return worth


@dataclass
class _SequenceState:
    drafter: PromptLookup
    draft_length: int
    acceptance: float


class SpeculationPolicy:
    def __init__(self, max_draft: int = 8, history_tokens: int = 100_000) -> None:
        self.max_draft = max_draft
        self.history = OutputHistory(history_tokens)
        self.rates = DecodeRates()
        self.acceptance = 0.5  # engine-wide moving average: a new sequence's first estimate
        self._states: dict[int, _SequenceState] = {}

    def plan(self, decoding: list[Sequence], max_len: int, measured: bool = True) -> dict[int, list[int]]:
        """Drafts for this step's decoding sequences (seq id -> tokens); none where the
        measurements say speculating is slower at this batch size. `measured`: False for a
        step that also computes a prompt, whose time says little about drafting: it follows
        the standing verdict (none yet: no drafts) and neither explores nor counts as a step."""
        if not (self.rates.choose(len(decoding)) if measured else self.rates.verdict(len(decoding))):
            return {}
        drafts: dict[int, list[int]] = {}
        for seq in decoding:
            state = self._states.get(seq.seq_id)
            if state is None:
                state = self._states[seq.seq_id] = _SequenceState(
                    PromptLookup(), min(4, self.max_draft), self.acceptance
                )
            room = min(seq.params.max_tokens - seq.num_completion_tokens, max_len - len(seq)) - 1
            k = worth_drafting(state.acceptance, len(decoding), min(state.draft_length, room))
            if k < 1:
                continue
            tokens = seq.token_ids
            n, draft = state.drafter.propose(tokens, k)
            history_n, history_draft = self.history.propose(tokens, k)
            if history_n > n or (history_n == n and len(history_draft) > len(draft)):
                draft = history_draft
            if draft:
                drafts[seq.seq_id] = draft
        return drafts

    def observe(self, seq: Sequence, proposed: int, accepted: int) -> None:
        state = self._states.get(seq.seq_id)
        if state is None:
            return
        rate = accepted / proposed
        state.acceptance += ACCEPTANCE_SMOOTHING * (rate - state.acceptance)
        self.acceptance += ACCEPTANCE_SMOOTHING * (rate - self.acceptance)
        if accepted == proposed:
            state.draft_length = min(self.max_draft, state.draft_length * 2)
        else:
            state.draft_length = max(1, accepted + 1)

    def finished(self, seq: Sequence) -> None:
        self._states.pop(seq.seq_id, None)
        if seq.finish_reason != "abort":
            self.history.add(seq.completion_token_ids)
