"""Merge overlapping time ranges.

merge(intervals) takes a list of [start, end] pairs of ints (any order) and returns a new list of
disjoint [start, end] pairs sorted by start, where every two input intervals that overlap or touch
(e.g. [1, 3] and [3, 5], but not [1, 2] and [3, 4]) are merged into one. The input list and its
pairs are not modified. An interval with start > end raises ValueError; start == end is allowed.

total_covered(intervals) is the total length (sum of end - start) of merge(intervals).

Command line: python3 intervals.py < FILE, where FILE has one interval per line written as
START-END (e.g. "10-20"; blank lines are ignored), prints the merged intervals in the same format,
one per line, followed by a last line "total=N".
"""
import sys


def merge(intervals):
    merged = []
    for interval in intervals:
        if merged and interval[0] < merged[-1][1]:
            merged[-1][1] = interval[1]
        else:
            merged.append(interval)
    return merged


def total_covered(intervals):
    return sum(end - start for start, end in merge(intervals))


def main():
    intervals = []
    for line in sys.stdin:
        start, end = line.split("-")
        intervals.append([int(start), int(end)])
    result = merge(intervals)
    for start, end in result:
        print(f"{start}-{end}")
    print(f"total={total_covered(intervals)}")


if __name__ == "__main__":
    main()
