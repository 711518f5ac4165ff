"""A chat template taken apart into token pieces, so a conversation can grow token by token.

Multi-turn rollouts must feed the model exactly the tokens it produced (token-in-token-out):
re-rendering the whole conversation through the template each turn can tokenize an earlier
turn differently, which breaks both the prefix cache and training on the engine's tokens. So
the pieces are rendered once each, by rendering small conversations with a sentinel and
cutting the text around it:

    header            what opens the assistant's turn ("<|im_start|>assistant\\n")
    end_of_turn       what closes it ("<|im_end|>\\n")
    message(role, x)  one whole non-assistant message
"""

from __future__ import annotations

from posttrain.models.token_ids import token_ids

_SENTINEL = "\u2063POSTTRAIN-SENTINEL\u2063"


class ChatTokens:
    def __init__(self, tokenizer) -> None:
        self.tokenizer = tokenizer
        base = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
        plain = self._text(base, generation_prompt=False)
        with_header = self._text(base, generation_prompt=True)
        if not with_header.startswith(plain):
            raise ValueError("the chat template's generation prompt does not extend the conversation")
        self.header = self.encode(with_header[len(plain) :])
        answered = self._text(base + [{"role": "assistant", "content": _SENTINEL}], generation_prompt=False)
        self.end_of_turn = self.encode(answered[answered.index(_SENTINEL) + len(_SENTINEL) :])
        self._base_text = plain
        self._base = base

    def _text(self, messages: list[dict], generation_prompt: bool) -> str:
        return self.tokenizer.apply_chat_template(messages, add_generation_prompt=generation_prompt, tokenize=False)

    def encode(self, text: str) -> list[int]:
        return token_ids(self.tokenizer(text, add_special_tokens=False))

    def conversation(self, messages: list[dict]) -> list[int]:
        """A whole conversation without the generation prompt (the fixed start of a prompt)."""
        return self.encode(self._text(messages, generation_prompt=False))

    def message(self, role: str, content: str) -> list[int]:
        """One message of `role` as the template renders it after earlier messages."""
        text = self._text(self._base + [{"role": role, "content": content}], generation_prompt=False)
        if not text.startswith(self._base_text):
            raise ValueError(f"the chat template renders a {role!r} message by changing earlier ones")
        return self.encode(text[len(self._base_text) :])

    def close_turn(self, completion_ids: list[int]) -> list[int]:
        """The tokens that end an assistant turn whose generated tokens are `completion_ids`:
        nothing of end_of_turn the model already produced (it usually stops on its first token)."""
        end = list(self.end_of_turn)
        if completion_ids and end and completion_ids[-1] == end[0]:
            return end[1:]
        return end
