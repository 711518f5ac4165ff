"""Print the most frequent words of a text file.

usage: python3 wordfreq.py FILE [N]
"""
import sys
from collections import Counter


def words(text):
    """The words of text: see the README for the exact rules."""
    return text.split()


def top_words(text, n=10):
    """The n most frequent words as (word, count) pairs: count descending, then word ascending."""
    counts = Counter(words(text))
    ranked = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    return ranked[:n]


def main(argv):
    path = argv[1]
    n = int(argv[2]) if len(argv) > 2 else 10
    with open(path) as fh:
        text = fh.read()
    for word, count in top_words(text, n):
        print(f"{word} {count}")


if __name__ == "__main__":
    main(sys.argv)
