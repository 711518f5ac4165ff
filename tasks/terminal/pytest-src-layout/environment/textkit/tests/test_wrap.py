from textkit import wrap


def test_basic():
    assert wrap("the quick brown fox", 10) == "the quick\nbrown fox"


def test_exact_fit():
    assert wrap("aaaa bbbb", 9) == "aaaa bbbb"
