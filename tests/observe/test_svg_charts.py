"""The report histograms' bins: one per whole number for counts (steps, turns), runs of whole
numbers when they span more; round widths between multiples of the width for times; equal
values one bin."""

import re

from posttrain.observe.svg_charts import histogram, round_width


def bins(svg: str) -> list[tuple[str, int]]:
    """(label, count) of each bar, from its tooltip."""
    return [(label, int(count)) for label, count in re.findall(r"<title>([^<]*): (\d+)</title>", svg)]


def test_counts_get_one_bin_per_whole_number():
    assert bins(histogram("steps", [1, 2, 2, 3, 7], integer=True)) == [
        ("1", 1), ("2", 2), ("3", 1), ("4", 0), ("5", 0), ("6", 0), ("7", 1)
    ]  # fmt: skip
    assert bins(histogram("steps", [4, 4, 4], integer=True)) == [("4", 3)]


def test_counts_over_a_wide_range_get_round_runs_of_whole_numbers():
    found = bins(histogram("turns", list(range(96)), integer=True))
    assert [label for label, _ in found] == [f"{k}-{k + 9}" for k in range(0, 100, 10)]
    assert [count for _, count in found] == [10] * 9 + [6]


def test_times_get_round_bins_and_equal_values_one_bin():
    assert bins(histogram("agent time", [0.12, 0.5, 1.9, 3.3], unit="s")) == [
        ("0.0-0.5s", 1), ("0.5-1.0s", 1), ("1.0-1.5s", 0), ("1.5-2.0s", 1), ("2.0-2.5s", 0), ("2.5-3.0s", 0),
        ("3.0-3.5s", 1),
    ]  # fmt: skip
    assert bins(histogram("agent time", [2.5, 2.5], unit="s")) == [("2.5s", 2)]
    assert [round_width(x) for x in (0.318, 1.0, 1.2, 3.0, 7.0, 0.04)] == [0.5, 1.0, 2.0, 5.0, 10.0, 0.05]
