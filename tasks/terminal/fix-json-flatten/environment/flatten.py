"""Flatten nested JSON into a single-level object.

usage: python3 flatten.py INPUT.json [--sep SEP]

Prints the flattened object as JSON (json.dumps(result, sort_keys=True)) on one line.

flatten(obj, sep=".") rules:
  * obj (the top level) must be a dict or a list, otherwise TypeError.
  * A nested dict contributes its keys joined to the parent key with sep: {"a": {"b": 1}} -> {"a.b": 1}.
  * A list contributes its indexes (0, 1, ...) as keys the same way: {"a": [5, 6]} -> {"a.0": 5, "a.1": 6}.
    A top-level list gives keys "0", "1", ...
  * Scalars (str, int, float, bool, None) are kept as they are.
  * An empty dict or empty list is kept as a value: {"a": {}} -> {"a": {}}, {"a": []} -> {"a": []}.
    An empty top-level dict or list flattens to {}.
  * sep is used at every level, and keys are not escaped.
"""
import json
import sys


def flatten(obj, sep=".", prefix=""):
    out = {}
    if isinstance(obj, dict):
        for key, value in obj.items():
            full = f"{prefix}.{key}" if prefix else key
            if isinstance(value, dict):
                out.update(flatten(value, sep, full))
            else:
                out[full] = value
    return out


def main(argv):
    sep = "."
    if "--sep" in argv:
        sep = argv[argv.index("--sep") + 1]
    with open(argv[1]) as fh:
        data = json.load(fh)
    print(json.dumps(flatten(data, sep), sort_keys=True))


if __name__ == "__main__":
    main(sys.argv)
