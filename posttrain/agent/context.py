"""The agent's prompt, built from layers and kept as tokens.

    system     instructions and tool definitions: never changes
    long_term  the task and project context: fixed for the episode
    working    the execution history: per turn, the assistant header, the model's own tokens
               exactly as generated, and the observation
    scratch    intermediate notes (budget warnings, recovery hints): pruned first

The prompt is system + long_term + working + scratch + the assistant header, in that order, so
from one turn to the next the prompt only grows at the end (scratch, when present, is the one
part that moves): the engine's prefix cache serves everything before it.

When the prompt would not leave room for the next reply (`max_tokens - reserve`), the context
first drops scratch, then replaces the oldest working turns with a one-line note of what they
did, and records each such decision in `events` (the trajectory keeps them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from posttrain.models.chat_tokens import ChatTokens


@dataclass
class WorkingTurn:
    completion_ids: list[int]  # the model's tokens: the only ones trained on
    observation_ids: list[int]  # turn closing + observation message: context, not trained on
    summary: str  # one line, used when the turn is dropped
    observation: str = ""  # the observation message's text and role (for chat-message prompts)
    role: str = "tool"

    def tokens(self, header: list[int]) -> list[int]:
        return header + self.completion_ids + self.observation_ids


@dataclass
class ContextEvent:
    turn: int
    rule: str  # "drop_scratch" | "drop_oldest_working"
    dropped_turns: int
    tokens_before: int
    tokens_after: int


@dataclass
class LayeredContext:
    chat: ChatTokens
    system: str
    long_term: str
    max_tokens: int
    reserve: int  # room kept for the next reply
    working: list[WorkingTurn] = field(default_factory=list)
    scratch: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # summaries of turns pruned away
    events: list[ContextEvent] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._fixed = self._render_fixed()

    def _fixed_messages(self) -> list[dict]:
        messages = [{"role": "system", "content": self.system}, {"role": "user", "content": self.long_term}]
        if self.dropped:
            note = (
                f"[{len(self.dropped)} earlier turns were removed to fit the context. They did:\n"
                + "\n".join(f"- {s}" for s in self.dropped[-40:])
                + "]"
            )
            messages.append({"role": "user", "content": note})
        return messages

    def _render_fixed(self) -> list[int]:
        return self.chat.conversation(self._fixed_messages())

    # ---- building ------------------------------------------------------------------------

    def add_turn(self, completion_ids: list[int], observation: str, summary: str, role: str = "tool") -> None:
        observation_ids = self.chat.close_turn(completion_ids) + self.chat.message(role, observation)
        self.working.append(WorkingTurn(list(completion_ids), observation_ids, summary, observation, role))

    def note(self, text: str) -> None:
        self.scratch.append(text)

    def clear_scratch(self) -> None:
        self.scratch.clear()

    # ---- rendering -------------------------------------------------------------------------

    def _render(self) -> list[int]:
        ids = list(self._fixed)
        for turn in self.working:
            ids += turn.tokens(self.chat.header)
        if self.scratch:
            ids += self.chat.message("user", "\n".join(self.scratch))
        return ids + self.chat.header

    def messages(self) -> list[dict]:
        """The conversation that the last prompt_ids() rendered, as chat messages (for engines
        that send messages to a remote chat API); the replies decoded from the model's tokens."""
        messages = self._fixed_messages()
        for turn in self.working:
            reply = self.chat.tokenizer.decode(turn.completion_ids, skip_special_tokens=True)
            messages += [{"role": "assistant", "content": reply}, {"role": turn.role, "content": turn.observation}]
        if self.scratch:
            messages.append({"role": "user", "content": "\n".join(self.scratch)})
        return messages

    def prompt_ids(self, turn: int) -> list[int]:
        """The prompt for the next reply, pruned to fit."""
        ids = self._render()
        budget = self.max_tokens - self.reserve
        if len(ids) > budget and self.scratch:
            before = len(ids)
            self.scratch.clear()
            ids = self._render()
            self.events.append(ContextEvent(turn, "drop_scratch", 0, before, len(ids)))
        if len(ids) > budget and self.working:
            before, count = len(ids), 0
            while len(ids) > budget and len(self.working) > 1:
                # drop half of what is over, at least one turn, oldest first
                self.dropped.append(self.working.pop(0).summary)
                count += 1
                self._fixed = self._render_fixed()
                ids = self._render()
            self.events.append(ContextEvent(turn, "drop_oldest_working", count, before, len(ids)))
        if len(ids) > budget:
            raise ContextOverflow(
                f"the prompt needs {len(ids)} tokens even after pruning; the limit is {budget} "
                f"(max_tokens {self.max_tokens} - reserve {self.reserve})"
            )
        return ids


class ContextOverflow(Exception):
    """Even the fixed layers and the newest turn do not fit the model's context."""
