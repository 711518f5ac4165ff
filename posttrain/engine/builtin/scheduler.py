"""Continuous batching under a token budget.

Each step: every running sequence that is decoding gets one token (a new block if it needs one,
preempting the most recently admitted sequence by recomputation when blocks run out); then
sequences still prefilling, and then waiting ones, get chunks of their prompts from what is
left of the budget (chunked prefill). A waiting sequence whose prompt prefix is being computed
by another sequence right now waits one step, so that it can share those blocks instead of
computing them again (group sampling: n samples of one prompt).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from posttrain.engine.builtin.block_manager import BlockManager
from posttrain.engine.builtin.sequence import Sequence, SequenceStatus


@dataclass
class ScheduledChunk:
    seq: Sequence
    num_tokens: int  # tokens to compute this step, starting at seq.num_computed_tokens (drafts included)
    num_draft: int = 0  # of those, the last are seq.draft: guesses to verify (speculative decoding)

    @property
    def completes(self) -> bool:
        """After this chunk every known token of the sequence is computed: sample one more."""
        return self.seq.num_computed_tokens + self.num_tokens - self.num_draft == len(self.seq)


class Scheduler:
    def __init__(self, block_manager: BlockManager, max_num_seqs: int, max_num_batched_tokens: int) -> None:
        self.blocks = block_manager
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.waiting: deque[Sequence] = deque()
        self.running: list[Sequence] = []
        self.preemptions = 0

    def add(self, seq: Sequence) -> None:
        self.waiting.append(seq)

    def has_work(self) -> bool:
        return bool(self.waiting or self.running)

    def schedule(self) -> list[ScheduledChunk]:
        budget = self.max_num_batched_tokens
        chunks: list[ScheduledChunk] = []
        # 1. decode and in-progress prefill of running sequences, oldest first
        for seq in sorted(self.running, key=lambda s: s.arrival):
            if seq not in self.running or budget == 0:
                continue
            if seq.draft and seq.num_uncomputed == 1:
                del seq.draft[max(budget - 1, 0) :]
            else:
                seq.draft = []
            want = min(seq.num_uncomputed + len(seq.draft), budget)
            needed = seq.blocks_needed(seq.num_computed_tokens + want) - len(seq.block_table)
            if seq.draft and needed > self.blocks.num_free:
                seq.draft = []  # a guess never takes blocks from another sequence
                want = 1
                needed = seq.blocks_needed(seq.num_computed_tokens + want) - len(seq.block_table)
            while needed > self.blocks.num_free and self._preempt_newest(newer_than=seq) is not None:
                pass
            if needed > self.blocks.num_free:
                self._preempt(seq)
                continue
            self.blocks.ensure_slots(seq, seq.num_computed_tokens + want)
            chunks.append(ScheduledChunk(seq, want, len(seq.draft)))
            budget -= want
        # 2. admit waiting sequences
        pending = self._pending_prefix_hashes(chunks)
        skipped: list[Sequence] = []
        while self.waiting and budget > 0 and len(self.running) < self.max_num_seqs:
            seq = self.waiting.popleft()
            hashes = self.blocks.prefix_hashes(seq)
            if any(h in pending for h in hashes if h not in self.blocks.cached):
                skipped.append(seq)  # its prefix is being computed now: share it next step
                continue
            if not self.blocks.can_allocate(seq, hashes):
                self.waiting.appendleft(seq)
                break
            self.blocks.allocate(seq, hashes)
            want = min(seq.num_uncomputed, budget)
            seq.status = SequenceStatus.RUNNING
            self.running.append(seq)
            chunks.append(ScheduledChunk(seq, want))
            budget -= want
            pending.update(hashes)
        self.waiting.extendleft(reversed(skipped))
        return chunks

    def fork(self, parent: Sequence, child: Sequence) -> tuple[int, int] | None | bool:
        """Admit `child`, a sample of the same prompt, on the parent's just-computed prompt KV.
        Returns the block copy the KV cache needs (or None); False when there is no room, in
        which case the child waits and prefills through the prefix cache like any sequence."""
        if len(self.running) >= self.max_num_seqs or self.blocks.num_free < 1:
            self.waiting.append(child)
            return False
        copy = self.blocks.fork(parent, child)
        child.status = SequenceStatus.RUNNING
        self.running.append(child)
        return copy

    def _pending_prefix_hashes(self, chunks: list[ScheduledChunk]) -> set[bytes]:
        pending: set[bytes] = set()
        for chunk in chunks:
            if chunk.seq.num_computed_tokens < chunk.seq.num_prompt_tokens:
                pending.update(self.blocks.prefix_hashes(chunk.seq))
        return pending

    def _preempt_newest(self, newer_than: Sequence) -> Sequence | None:
        """Only sequences admitted after `newer_than` (not yet scheduled this step) may go."""
        candidates = [s for s in self.running if s.arrival > newer_than.arrival]
        if not candidates:
            return None
        victim = max(candidates, key=lambda s: s.arrival)
        self._preempt(victim)
        return victim

    def _preempt(self, seq: Sequence) -> None:
        """Recompute later: drop its blocks, keep its tokens (prompt + generated so far)."""
        self.blocks.free_sequence(seq)
        self.running.remove(seq)
        seq.draft = []
        seq.status = SequenceStatus.WAITING
        seq.preemptions += 1
        self.preemptions += 1
        self.waiting.appendleft(seq)

    def finish(self, seq: Sequence, reason: str) -> None:
        seq.status = SequenceStatus.FINISHED
        seq.finish_reason = reason
        if seq in self.running:
            self.running.remove(seq)
        else:
            try:
                self.waiting.remove(seq)
            except ValueError:
                pass
        self.blocks.free_sequence(seq)
