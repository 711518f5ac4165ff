"""What a tokenizer returns, as a plain list of token ids.

`apply_chat_template(..., tokenize=True)` and `tokenizer(text)` return a list in some
transformers versions and a BatchEncoding (a dict holding `input_ids`) in others (5.x).
"""

from __future__ import annotations


def token_ids(encoded) -> list[int]:
    if isinstance(encoded, dict) or hasattr(encoded, "input_ids"):
        encoded = encoded["input_ids"]
    return list(encoded)


def chat_prompt_ids(tokenizer, messages: list[dict]) -> list[int]:
    """The token ids of `messages` rendered by the chat template, ending with the header that
    opens the assistant's turn (the prompt a model completes)."""
    return token_ids(tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True))
