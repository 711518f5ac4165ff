"""How the quality gate does on flawed tasks it was not written against: five corpora, each
written by an agent that did not read the checker, each task's flaw (or soundness) confirmed
by hand in a sandbox (EXPECTED.tsv in each says the verdict and why; RESULTS.md, the hack).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/unseen_corpora.py --out unseen.json

Prints JSON: per corpus, the tasks, how many got the expected verdict, and the misses.
Flaky verdicts are statistical: a run can miss one that the next catches.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from posttrain.console import emit_benchmark
from posttrain.quality.inspector import InspectOptions, inspect_dirs, task_dirs

ROOT = Path(__file__).parent / "unseen_corpora"


def expected(corpus: Path) -> dict[str, str]:
    rows = {}
    for line in (corpus / "EXPECTED.tsv").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, verdict = line.split("\t")[:2]
            rows[name] = verdict
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpora",
        default=",".join(sorted(p.name for p in ROOT.iterdir() if p.is_dir())),
        help="comma-separated corpus directories under benchmarks/unseen_corpora",
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    results, started = {}, time.perf_counter()
    for name in args.corpora.split(","):
        corpus = ROOT / name
        want = expected(corpus)
        reports = inspect_dirs(
            task_dirs(corpus),
            InspectOptions(repeats=args.repeats, use_cache=False),
            on_task=lambda r, name=name: print(f"{name}/{r.id}: {r.verdict}", flush=True),
        )
        misses = [
            {"task": r.id, "got": r.verdict, "want": want.get(r.id), "reason": r.reason[:200]}
            for r in reports
            if r.verdict != want.get(r.id)
        ]
        results[name] = {"tasks": len(reports), "right": len(reports) - len(misses), "misses": misses}
    total = sum(r["tasks"] for r in results.values())
    right = sum(r["right"] for r in results.values())
    summary = {
        "tasks": total,
        "right": right,
        "accuracy": round(right / total, 3) if total else None,
        "duration_s": round(time.perf_counter() - started, 1),
        "corpora": results,
    }
    emit_benchmark(summary, args.out)


if __name__ == "__main__":
    main()
