"""Streamed text never shows what it may have to take back: a stop string's beginning, or half
of a multi-byte character."""

from posttrain.serve.text_stream import TextStream


def test_a_possible_stop_string_is_held_back_and_cut(tokenizer):
    ids = tokenizer("Hello world. END of text", add_special_tokens=False)["input_ids"]
    stream = TextStream(tokenizer, ("END",))
    pieces = [stream.push([token]) for token in ids]
    shown = "".join(pieces)
    assert "END" not in shown and "E" not in shown.removeprefix("Hello world.")
    assert shown + stream.finish("Hello world. ") == "Hello world. "


def test_a_split_character_waits_for_its_other_half(tokenizer):
    ids = tokenizer("café ☕ ok", add_special_tokens=False)["input_ids"]
    stream = TextStream(tokenizer, ())
    pieces = [stream.push([token]) for token in ids]
    assert all("\ufffd" not in piece for piece in pieces)
    assert "".join(pieces) + stream.finish("café ☕ ok") == "café ☕ ok"
    assert sum(1 for piece in pieces if piece) >= 3  # streamed in pieces, not all at the end


def test_a_forced_prefix_is_part_of_the_reply(tokenizer):
    stream = TextStream(tokenizer, (), prefix="<tool_call>")
    assert stream.push(tokenizer("{}", add_special_tokens=False)["input_ids"]) == "<tool_call>{}"
