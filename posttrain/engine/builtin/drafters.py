"""Draft tokens for speculative decoding, guessed without a model.

Two sources, both n-gram lookups (longest n first, MAX_NGRAM down to MIN_NGRAM):

    PromptLookup    the sequence's own tokens (prompt and output so far): an agent's command
                    quotes a file name from the prompt, an answer repeats the question
    OutputHistory   the completions finished earlier (other requests, earlier turns and
                    episodes): agents repeat themselves across turns

A draft is what followed the latest earlier occurrence of the sequence's last n tokens. The
target model checks every draft token, so a bad guess costs compute, never correctness.
"""

from __future__ import annotations

from collections import OrderedDict

MIN_NGRAM = 2
MAX_NGRAM = 4


class NgramIndex:
    """For each n-gram of one growing token list, the position just after its latest occurrence."""

    def __init__(self) -> None:
        self.after: dict[tuple[int, ...], int] = {}
        self.indexed = 0  # n-grams ending at positions <= this are indexed

    def update(self, tokens: list[int], end: int) -> None:
        """Index the n-grams that end at positions up to `end` (exclusive bound on their end)."""
        for stop in range(self.indexed + 1, end + 1):
            for n in range(MIN_NGRAM, MAX_NGRAM + 1):
                if stop >= n:
                    self.after[tuple(tokens[stop - n : stop])] = stop
        self.indexed = max(self.indexed, end)

    def continuation(self, tokens: list[int], k: int) -> tuple[int, list[int]]:
        """(n, the up to k tokens that followed the longest matching tail n-gram); (0, []) if none."""
        for n in range(MAX_NGRAM, MIN_NGRAM - 1, -1):
            if len(tokens) < n:
                continue
            start = self.after.get(tuple(tokens[-n:]))
            if start is not None and start < len(tokens):
                return n, tokens[start : start + k]
        return 0, []


class PromptLookup:
    """Drafts from the sequence's own tokens; one index per sequence, grown as it grows."""

    def __init__(self) -> None:
        self.index = NgramIndex()

    def propose(self, tokens: list[int], k: int) -> tuple[int, list[int]]:
        # the tail itself is left out of the index: its continuation is what we are guessing
        self.index.update(tokens, len(tokens) - 1)
        return self.index.continuation(tokens, k)


class OutputHistory:
    """Drafts from earlier completions, newest first; at most `capacity` tokens are kept."""

    def __init__(self, capacity: int = 100_000) -> None:
        self.capacity = capacity
        self.outputs: OrderedDict[int, list[int]] = OrderedDict()
        self.after: dict[tuple[int, ...], tuple[int, int]] = {}  # n-gram -> (output id, position after)
        self.size = 0
        self._next_id = 0

    def add(self, tokens: list[int]) -> None:
        if len(tokens) <= MIN_NGRAM:
            return
        output_id, self._next_id = self._next_id, self._next_id + 1
        tokens = list(tokens[-self.capacity :])
        self.outputs[output_id] = tokens
        self.size += len(tokens)
        for stop in range(MIN_NGRAM, len(tokens)):
            for n in range(MIN_NGRAM, min(MAX_NGRAM, stop) + 1):
                self.after[tuple(tokens[stop - n : stop])] = (output_id, stop)
        while self.size > self.capacity:
            dropped_id, dropped = self.outputs.popitem(last=False)
            self.size -= len(dropped)
            for stop in range(MIN_NGRAM, len(dropped)):
                for n in range(MIN_NGRAM, min(MAX_NGRAM, stop) + 1):
                    key = tuple(dropped[stop - n : stop])
                    if self.after.get(key, (None,))[0] == dropped_id:
                        del self.after[key]

    def propose(self, tokens: list[int], k: int) -> tuple[int, list[int]]:
        for n in range(MAX_NGRAM, MIN_NGRAM - 1, -1):
            if len(tokens) < n:
                continue
            hit = self.after.get(tuple(tokens[-n:]))
            if hit is None:
                continue
            return n, self.outputs[hit[0]][hit[1] : hit[1] + k]
        return 0, []
