"""Inspection time against running the reference solutions once, side by side in one run.

    python benchmarks/inspect_bench.py [--tasks tasks/terminal] [--repeats 3,2,1] [--rounds 1] [--out FILE.json]

Three timings on the same suite, warm environment cache (each side builds nothing):
- oracle once, one at a time: every task's solve.sh and verifier, one task after another;
- oracle once, parallel: the same at `posttrain eval`'s default concurrency (4);
- the full inspection (every check, every probe), once for each `--repeats` value (runs of the
  solution and of doing nothing; `posttrain inspect`'s default is 3), each with an empty store
  of inspections (cold: every task is inspected);
- the inspection at the first `--repeats` value again over the unchanged suite, with the store
  the cold run filled (what `quality_gate = true` pays on a second run).
The sides alternate for `--rounds` rounds and the medians are reported. Progress goes to
stderr; stdout gets one JSON object with the times and the ratios.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def log(message: str) -> None:
    print(f"[inspect_bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def oracle_once(tasks, concurrency: int) -> float:
    from posttrain.agent.policies import OraclePolicy
    from posttrain.evaluate.runner import run_eval
    from posttrain.models.loading import load_tokenizer

    tokenizer = load_tokenizer("smollm2-135m")
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        summary = run_eval(tasks, "oracle", OraclePolicy(), tokenizer, Path(out) / "run", concurrency=concurrency)
        elapsed = time.perf_counter() - started
    if summary["pass_at_1"] != 1.0:
        raise SystemExit(f"the reference solutions do not all pass (pass@1 {summary['pass_at_1']})")
    return elapsed


def inspection(source: Path, repeats: int, concurrency: int, store: Path) -> tuple[float, dict]:
    from posttrain.quality.gate import run_inspection
    from posttrain.quality.inspector import InspectOptions

    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        report = run_inspection(source, out, InspectOptions(repeats=repeats, concurrency=concurrency, cache_dir=store))
        return time.perf_counter() - started, report["summary"]["verdicts"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, default=REPO / "tasks" / "terminal")
    parser.add_argument("--repeats", default="3", help="comma-separated: one inspection per value")
    parser.add_argument(
        "--concurrency",
        type=int,
        default=None,
        help="the inspection's (default: posttrain inspect's, one per core plus one)",
    )
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    from posttrain.quality.inspector import default_concurrency

    args.concurrency = args.concurrency or default_concurrency()
    from posttrain.agent.task_sandbox import build_task_environment
    from posttrain.tasks.harbor import load_harbor_suite

    tasks = load_harbor_suite(args.tasks)
    for task in tasks:  # warm cache: neither side pays for builds
        build_task_environment(task)
    repeats = [int(r) for r in args.repeats.split(",")]
    times: dict[str, list[float]] = {
        "oracle_sequential_s": [],
        "oracle_parallel_s": [],
        **{f"inspect_r{r}_s": [] for r in repeats},
        f"reinspect_unchanged_r{repeats[0]}_s": [],
    }
    verdicts: dict = {}
    for round_index in range(args.rounds):
        log(f"round {round_index + 1}: oracle once, one at a time")
        times["oracle_sequential_s"].append(oracle_once(tasks, 1))
        log(f"round {round_index + 1}: oracle once, concurrency 4")
        times["oracle_parallel_s"].append(oracle_once(tasks, 4))
        for r in repeats:
            with tempfile.TemporaryDirectory() as store:
                log(f"round {round_index + 1}: inspection, repeats {r}")
                elapsed, verdicts[r] = inspection(args.tasks, r, args.concurrency, Path(store))
                times[f"inspect_r{r}_s"].append(elapsed)
                if r == repeats[0]:
                    log(f"round {round_index + 1}: inspection again, unchanged suite, stored inspections")
                    elapsed, again = inspection(args.tasks, r, args.concurrency, Path(store))
                    if again != verdicts[r]:
                        raise SystemExit(f"stored inspections changed the verdicts: {again} != {verdicts[r]}")
                    times[f"reinspect_unchanged_r{r}_s"].append(elapsed)
    medians = {k: round(statistics.median(v), 2) for k, v in times.items()}
    result = {
        "tasks": len(tasks),
        "rounds": args.rounds,
        "inspect_concurrency": args.concurrency,
        **medians,
        "ratio_to_sequential": {
            f"r{r}": round(medians[f"inspect_r{r}_s"] / medians["oracle_sequential_s"], 2) for r in repeats
        },
        "ratio_to_parallel": {
            f"r{r}": round(medians[f"inspect_r{r}_s"] / medians["oracle_parallel_s"], 2) for r in repeats
        },
        "verdicts": {f"r{r}": {k: v for k, v in verdicts[r].items() if v} for r in repeats},
        "raw": times,
    }
    from posttrain.console import emit_benchmark

    emit_benchmark(result, args.out)


if __name__ == "__main__":
    main()
