import pytest

from textkit import slugify, wrap
from textkit.slug import slugify as slugify2


def test_same_object():
    assert slugify is slugify2


@pytest.mark.parametrize("text,want", [
    ("  --Hello--World--  ", "hello-world"),
    ("Ünïcödé façade", "unicode-facade"),
    ("ÆON 2024 — the end", "on-2024-the-end"),
    ("a_b.c/d", "a-b-c-d"),
    ("日本語", ""),
    ("", ""),
    ("MiXeD CaSe 42", "mixed-case-42"),
])
def test_slugify_cases(text, want):
    assert slugify(text) == want


def test_slugify_max_length():
    assert slugify("Hello big world", max_length=10) == "hello-big"
    assert slugify("Hello big world", max_length=9) == "hello-big"
    assert slugify("Hello big world", max_length=6) == "hello"
    assert slugify("Hello", max_length=50) == "hello"


@pytest.mark.parametrize("text,width,want", [
    ("the quick brown fox jumps", 9, "the quick\nbrown fox\njumps"),
    ("aaaa bbbb cccc", 9, "aaaa bbbb\ncccc"),
    ("a b c d", 1, "a\nb\nc\nd"),
    ("supercalifragilistic is long", 5, "supercalifragilistic\nis\nlong"),
    ("  spaced\t\tout \n words ", 12, "spaced out\nwords"),
    ("", 10, ""),
    ("   ", 3, ""),
    ("one", 3, "one"),
])
def test_wrap_cases(text, width, want):
    assert wrap(text, width) == want


def test_wrap_invalid_width():
    with pytest.raises(ValueError):
        wrap("x", 0)
