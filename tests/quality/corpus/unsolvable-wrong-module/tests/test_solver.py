import sys
sys.path.insert(0, "/app")


def test_answer():
    from solver import answer
    assert answer() == 42
