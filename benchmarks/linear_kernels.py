"""MKL's sgemm (F.linear) against oneDNN (the builtin engine's linear kernel) on SmolLM2's shapes.

For each weight shape and row count it times both kernels side by side, alternating, over
enough distinct weight matrices that they come from memory as in a real forward pass (a decode
step reads every layer's weights once). It also checks what zero mismatch rests on: oneDNN's
result for a row is the same whatever the row count of the call (from 2 rows; posttrain's
OneDNNLinear computes a single row as one of two), and the same with the weight reordered (the
engine) or plain (the trainer).

    python benchmarks/linear_kernels.py [--rows 8,96,128,2048] --out FILE.json

Prints JSON: {"shapes": [{"out", "in", "rows", "mkl_ms", "onednn_reordered_ms", "onednn_plain_ms",
"speedup"}], "row_count_invariant": bool, "reordered_equals_plain": bool}.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from posttrain.console import emit_benchmark

SHAPES = [(576, 576), (192, 576), (1536, 576), (576, 1536), (49152, 576)]  # (out, in): q/o, k/v, gate/up, down, head
BYTES_FROM_MEMORY = 200 << 20  # more weight bytes than the last-level cache holds


def onednn(x, weight):
    return torch.ops.mkldnn._linear_pointwise(x, weight, None, "none", [], "")


def time_shape(out_features: int, in_features: int, rows: int, rounds: int) -> dict:
    count = max(2, BYTES_FROM_MEMORY // (out_features * in_features * 4))
    weights = [torch.randn(out_features, in_features) * 0.05 for _ in range(count)]
    reordered = [torch.ops.mkldnn._reorder_linear_weight(w, 128) for w in weights]
    x = torch.randn(rows, in_features)
    kernels = {
        "mkl_ms": lambda: [F.linear(x, w) for w in weights],
        "onednn_reordered_ms": lambda: [onednn(x, w) for w in reordered],
        "onednn_plain_ms": lambda: [onednn(x, w) for w in weights],
    }
    totals = dict.fromkeys(kernels, 0.0)
    for round_index in range(rounds):
        order = list(kernels) if round_index % 2 else list(reversed(kernels))
        for name in order:
            started = time.perf_counter()
            kernels[name]()
            totals[name] += time.perf_counter() - started
    row = {"out": out_features, "in": in_features, "rows": rows, "weights": count}
    row.update({name: total / rounds / count * 1e3 for name, total in totals.items()})
    row["speedup"] = row["mkl_ms"] / row["onednn_reordered_ms"]
    return row


def invariance() -> tuple[bool, bool]:
    torch.manual_seed(0)
    invariant = same = True
    for out_features, in_features in SHAPES:
        weight = torch.randn(out_features, in_features) * 0.05
        reordered = torch.ops.mkldnn._reorder_linear_weight(weight, 128)
        x = torch.randn(1024, in_features)
        full = onednn(x, weight)
        for rows in (2, 3, 4, 7, 12, 96, 333):  # one row is a matrix-vector product: the engine never sends it
            part = onednn(x[:rows].contiguous(), reordered)
            invariant &= torch.equal(part, full[:rows])
            same &= torch.equal(part, onednn(x[:rows].contiguous(), weight))
    return invariant, same


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", default="8,96,128,2048", help="row counts to time (comma-separated)")
    parser.add_argument("--rounds", type=int, default=6, help="alternating rounds per shape (default 6)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    try:
        row_counts = [int(r) for r in args.rows.split(",") if r.strip()]
    except ValueError:
        parser.error(f"--rows {args.rows!r}: give row counts as integers, comma-separated")
    if not row_counts or min(row_counts) < 1 or args.rounds < 1:
        parser.error("--rows needs counts >= 1 and --rounds >= 1")
    torch.set_num_threads(args.threads)
    shapes = []
    for rows in row_counts:
        for out_features, in_features in SHAPES:
            row = time_shape(out_features, in_features, rows, args.rounds)
            print(
                f"{out_features}x{in_features} at {rows} rows: mkl {row['mkl_ms']:.3f} ms, "
                f"onednn {row['onednn_reordered_ms']:.3f} ms ({row['speedup']:.2f}x)",
                file=sys.stderr,
            )
            shapes.append(row)
    invariant, same = invariance()
    result = {
        "threads": args.threads,
        "torch": torch.__version__,
        "shapes": shapes,
        "row_count_invariant": invariant,
        "reordered_equals_plain": same,
    }
    emit_benchmark(result, args.out)
    return result


if __name__ == "__main__":
    main()
