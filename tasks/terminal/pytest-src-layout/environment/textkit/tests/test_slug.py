from textkit import slugify


def test_simple():
    assert slugify("Hello World") == "hello-world"


def test_punctuation_runs():
    assert slugify("Hello,   World!!") == "hello-world"


def test_accents():
    assert slugify("Crème Brûlée") == "creme-brulee"
