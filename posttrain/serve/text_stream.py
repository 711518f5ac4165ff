"""A sample's text as it grows token by token, handed out in safe pieces for streaming.

A piece is held back while it might still change: a token that ends inside a multi-byte
character decodes to U+FFFD until the next one completes it, and text that could be the start
of a stop string must not reach the client before we know the stop string is not there.
"""

from __future__ import annotations


class TextStream:
    def __init__(self, tokenizer, stops: tuple[str, ...], prefix: str = "") -> None:
        self.tokenizer = tokenizer
        self.stops = stops
        self.prefix = prefix
        self.token_ids: list[int] = []
        self.emitted = 0  # characters of the text already handed out

    def push(self, token_ids: list[int]) -> str:
        """The new safe text after these tokens."""
        self.token_ids.extend(token_ids)
        text = self._cut(self.prefix + self.tokenizer.decode(self.token_ids, skip_special_tokens=True))
        safe = len(text)
        if text.endswith("\ufffd"):
            safe = len(text.rstrip("\ufffd"))
        for stop in self.stops:
            for length in range(min(len(stop) - 1, safe), 0, -1):
                if text[:safe].endswith(stop[:length]):
                    safe = min(safe, len(text[:safe]) - length)
                    break
        return self._hand_out(text[: max(safe, self.emitted)])

    def finish(self, final_text: str) -> str:
        """The rest, given the sample's final text (the engine's, cut at a stop string)."""
        return self._hand_out(self.prefix + final_text)

    def _cut(self, text: str) -> str:
        cuts = [text.find(stop) for stop in self.stops if stop in text]
        return text[: min(cuts)] if cuts else text

    def _hand_out(self, text: str) -> str:
        piece = text[self.emitted :]
        self.emitted = max(self.emitted, len(text))
        return piece
