"""The answer gate over the answer domains of examples/hundred_domains.toml (no model probe).

    OMP_NUM_THREADS=1 python benchmarks/answer_gate.py [--config examples/hundred_domains.toml]
        [--items 32] [--out benchmarks/results/answer_gate.json]

Expands the config's domains (reasoning-gym:* and the rest), builds every answer domain's
source and inspects it as `quality_gate = true` would at the start of a run: each domain's
verdict, the reason it was dropped, its items checked and quarantined, and the time taken
(expansion and inspection apart). Progress goes to stderr; stdout gets one JSON object.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def log(message: str) -> None:
    print(f"[answer_gate {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=REPO / "examples" / "hundred_domains.toml")
    parser.add_argument("--items", type=int, default=32, help="items checked per domain (held-out ones first)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    from posttrain.config import load_config
    from posttrain.quality.answer_gate import build_answer_domains, inspect_answer_domains
    from posttrain.quality.answer_inspection import AnswerInspectOptions
    from posttrain.tasks.answer_sources import is_answer_domain
    from posttrain.tasks.domain_patterns import expand_domains

    started = time.perf_counter()
    left_out: list[str] = []
    config = expand_domains(load_config(args.config), log=left_out.append)
    answer = [d for d in config.domains if is_answer_domain(d)]
    domains = build_answer_domains(answer, args.config.parent)
    expand_s = time.perf_counter() - started
    log(f"{len(answer)} answer domains of {len(config.domains)} ({len(left_out)} left out by the expansion)")

    def on_domain(report) -> None:
        log(f"{report.id}: {report.verdict}" + (f" ({report.reason[:120]})" if report.reason else ""))

    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as out:
        report, reports = inspect_answer_domains(
            domains, out, AnswerInspectOptions(max_items=args.items), on_domain=on_domain
        )
    inspect_s = time.perf_counter() - started
    dropped = [r for r in reports if r.dropped]
    result = {
        "config": str(args.config.relative_to(REPO) if args.config.is_relative_to(REPO) else args.config),
        "items_per_domain": args.items,
        "domains_in_config": len(config.domains),
        "answer_domains": len(reports),
        "left_out_by_expansion": left_out,
        "kept": len(reports) - len(dropped),
        "dropped": len(dropped),
        "dropped_by_verdict": dict(Counter(r.verdict for r in dropped)),
        "items_checked": report["summary"]["items_checked"],
        "items_quarantined": report["summary"]["items_quarantined"],
        "items_quarantined_by_check": dict(
            Counter(c.name for r in reports for i in r.items for c in i.checks if c.status == "fail")
        ),
        "expand_and_build_s": round(expand_s, 1),
        "inspect_s": round(inspect_s, 1),
        "domains": [
            {
                "name": r.id,
                "source": r.path,
                "verdict": r.verdict,
                "reason": r.reason,
                "items_checked": r.items_checked,
                "items_quarantined": len(r.items),
                "duration_s": round(r.duration_s, 3),
            }
            for r in reports
        ],
    }
    from posttrain.console import emit_benchmark

    emit_benchmark(result, args.out)


if __name__ == "__main__":
    main()
