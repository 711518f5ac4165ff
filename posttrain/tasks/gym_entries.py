"""A reasoning-gym entry as JSON and back, so its `score_answer` sees what the generator made.

Tasks travel as JSON (checkpoints, rollout workers, the trajectory store), but an entry's
metadata can hold tuples, sets and numpy arrays that `score_answer` compares by type: arc_agi
and rearc compare the parsed reply (a tuple of tuples) with `metadata["output"]`, which plain
JSON turns into lists, so even the reference answer scored 0.05. Those values are stored tagged
(`{"__tuple__": [...]}`) and rebuilt before scoring; anything else JSON cannot hold becomes its
str(), as before.
"""

from __future__ import annotations

import json
from typing import Any

TAGS = ("__tuple__", "__set__", "__frozenset__", "__ndarray__")


def encode(value: Any) -> Any:
    """`value` as JSON-safe data that `decode` turns back into equal Python values."""
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, tuple):
        return {"__tuple__": [encode(v) for v in value]}
    if isinstance(value, (set, frozenset)):
        items = [encode(v) for v in sorted(value, key=repr)]
        return {"__frozenset__" if isinstance(value, frozenset) else "__set__": items}
    if type(value).__module__ == "numpy":
        if hasattr(value, "tolist") and hasattr(value, "shape") and value.shape != ():
            return {"__ndarray__": value.tolist(), "dtype": str(value.dtype)}
        return value.item() if hasattr(value, "item") else str(value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return json.loads(json.dumps(value, default=str))


def decode(value: Any) -> Any:
    """The Python values `encode` stored (tuples, sets, numpy arrays) rebuilt."""
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    tag = next((t for t in TAGS if t in value), None)
    if tag == "__tuple__":
        return tuple(decode(v) for v in value[tag])
    if tag == "__set__":
        return {_hashable(decode(v)) for v in value[tag]}
    if tag == "__frozenset__":
        return frozenset(_hashable(decode(v)) for v in value[tag])
    if tag == "__ndarray__":
        import numpy

        return numpy.array(value[tag], dtype=value.get("dtype"))
    return {k: decode(v) for k, v in value.items()}


def _hashable(value: Any) -> Any:
    return tuple(_hashable(v) for v in value) if isinstance(value, list) else value
