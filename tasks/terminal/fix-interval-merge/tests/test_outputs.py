import copy
import random
import subprocess
import sys

import pytest

sys.path.insert(0, "/app")
sys.dont_write_bytecode = True

from intervals import merge, total_covered  # noqa: E402


def ref(intervals):
    out = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


CASES = [
    [],
    [[1, 3], [2, 6], [8, 10], [15, 18]],
    [[8, 10], [1, 3], [2, 6]],
    [[1, 3], [3, 5]],
    [[1, 2], [3, 4]],
    [[1, 10], [2, 3], [4, 5]],
    [[5, 5], [5, 5], [1, 1]],
    [[-5, -1], [-2, 3], [10, 12]],
    [[1, 4], [0, 0]],
]


@pytest.mark.parametrize("case", CASES)
def test_merge_cases(case):
    original = copy.deepcopy(case)
    assert merge(case) == ref(case)
    assert case == original


def test_merge_random_and_no_aliasing():
    rng = random.Random(11)
    for _ in range(300):
        case = []
        for _ in range(rng.randint(0, 12)):
            s = rng.randint(-20, 40)
            case.append([s, s + rng.randint(0, 8)])
        original = copy.deepcopy(case)
        result = merge(case)
        assert result == ref(case)
        assert case == original
        if result:
            result[0][1] += 1000
            assert case == original


def test_invalid_interval():
    with pytest.raises(ValueError):
        merge([[1, 2], [5, 3]])


def test_total_covered():
    assert total_covered([[1, 3], [2, 6], [8, 10]]) == 7
    assert total_covered([[1, 10], [2, 3]]) == 9
    assert total_covered([]) == 0


def test_cli():
    text = "30-40\n\n1-3\n10-20\n3-5\n15-25\n  \n7-7\n"
    out = subprocess.run(["python3", "/app/intervals.py"], input=text, capture_output=True, text=True,
                         check=True).stdout
    assert out == "1-5\n7-7\n10-25\n30-40\ntotal=29\n"
