"""The inspection's outputs: report.json (every check with its evidence), report.md, report.html
(self-contained, inline SVG) and quarantine.txt."""

from __future__ import annotations

import html
import json
from collections import Counter
from pathlib import Path

from posttrain.observe.svg_charts import bar_chart
from posttrain.quality.quarantine import write_quarantine
from posttrain.quality.verdicts import VERDICTS
from posttrain.storage.atomic import write_json_atomic, write_text_atomic

HISTOGRAM_BINS = 10


def difficulty_histogram(rates: list[float]) -> dict:
    """Pass rates across tasks in ten bins of width 0.1 (1.0 falls in the last)."""
    counts = [0] * HISTOGRAM_BINS
    for rate in rates:
        counts[min(HISTOGRAM_BINS - 1, int(rate * HISTOGRAM_BINS))] += 1
    edges = [round(i / HISTOGRAM_BINS, 1) for i in range(HISTOGRAM_BINS + 1)]
    return {"edges": edges, "counts": counts, "zero": sum(r == 0.0 for r in rates), "one": sum(r == 1.0 for r in rates)}


def build_report(reports: list, meta: dict) -> dict:
    verdicts = Counter(r.verdict for r in reports)
    rates = [r.pass_rate for r in reports if r.pass_rate is not None]
    return {
        "summary": {
            **meta,
            "n_tasks": len(reports),
            "verdicts": {v: verdicts.get(v, 0) for v in VERDICTS},
            "quarantined": sum(1 for r in reports if r.verdict != "ok"),
            "from_cache": sum(1 for r in reports if r.cached_from is not None),
        },
        "difficulty_histogram": difficulty_histogram(rates) if rates else None,
        "tasks": [r.to_dict() for r in reports],
    }


def write_outputs(out: Path, report: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / "report.json", report, indent=1, sort_keys=False)
    write_text_atomic(out / "report.md", markdown(report))
    write_text_atomic(out / "report.html", html_page(report))
    write_quarantine(
        out / "quarantine.txt", [(t["id"], t["verdict"], t["reason"]) for t in report["tasks"] if t["verdict"] != "ok"]
    )


def _failed(task: dict) -> list[dict]:
    return [c for c in task["checks"] if c["status"] == "fail"]


def _warnings(task: dict) -> list[str]:
    return [c["name"] for c in task["checks"] if c["status"] == "warn"]


def _reused(summary: dict) -> str:
    n = summary.get("from_cache")
    return f"; {n} reports reused from stored inspections of unchanged tasks" if n else ""


def _scope(summary: dict) -> str:
    """The first line: what was inspected, how long it took, how much was quarantined."""
    took = f"{summary.get('duration_s', 0):.1f} s"
    if summary.get("kind") == "answer":  # answer_gate.py: domains and their items
        domains = summary["domains"]
        return (
            f"{domains['n']} answer domains in {took}: {domains['kept']} kept, {domains['dropped']} dropped; "
            f"{summary['items_quarantined']} of {summary['items_checked']} items checked quarantined."
        )
    return (
        f"{summary['n_tasks']} tasks in {took} "
        f"(repeats {summary.get('repeats')}, concurrency {summary.get('concurrency')}); "
        f"{summary['quarantined']} quarantined{_reused(summary)}."
    )


def markdown(report: dict) -> str:
    summary = report["summary"]
    lines = [
        f"# Quality inspection of {summary.get('source', 'tasks')}",
        "",
        _scope(summary),
        "",
        "| verdict | tasks |",
        "|---|---|",
        *(f"| {v} | {n} |" for v, n in summary["verdicts"].items() if n),
        "",
        "## Tasks",
        "",
        "| task | verdict | reason | warnings |",
        "|---|---|---|---|",
    ]
    for task in report["tasks"]:
        reason = task["reason"].replace("|", "\\|").replace("\n", " ")[:300]
        lines.append(f"| {task['id']} | {task['verdict']} | {reason} | {', '.join(_warnings(task))} |")
    histogram = report.get("difficulty_histogram")
    if histogram:
        lines += ["", "## Difficulty (policy pass rate per task)", "", "| pass rate | tasks |", "|---|---|"]
        edges = histogram["edges"]
        lines += [f"| {edges[i]:.1f}-{edges[i + 1]:.1f} | {c} |" for i, c in enumerate(histogram["counts"])]
    return "\n".join(lines) + "\n"


def _check_rows(task: dict) -> str:
    rows = []
    for check in task["checks"]:
        evidence = html.escape(json.dumps(check["evidence"], indent=1, default=str)[:20000])
        rows.append(
            f"<tr class='{check['status']}'><td>{html.escape(check['name'])}</td><td>{check['status']}</td>"
            f"<td>{html.escape(check['summary'][:500])}</td><td><details><summary>evidence</summary>"
            f"<pre>{evidence}</pre></details></td></tr>"
        )
    return "".join(rows)


def html_page(report: dict) -> str:
    summary = report["summary"]
    plots = [
        bar_chart(
            "Tasks by verdict",
            [(v, float(n)) for v, n in summary["verdicts"].items()],
            plot_id="verdicts",
            fmt="{:.0f}",
        )
    ]
    histogram = report.get("difficulty_histogram")
    if histogram:
        edges = histogram["edges"]
        plots.append(
            bar_chart(
                "Difficulty: policy pass rate per task",
                [(f"{edges[i]:.1f}-{edges[i + 1]:.1f}", float(c)) for i, c in enumerate(histogram["counts"])],
                plot_id="difficulty",
                fmt="{:.0f}",
            )
        )
    tasks = "".join(
        f"<section class='task {t['verdict']}' id='task-{html.escape(t['id'])}'><h3>{html.escape(t['id'])}: "
        f"<span class='verdict'>{t['verdict']}</span></h3><p>{html.escape(t['reason'][:1000])}</p>"
        f"<table><tr><th>check</th><th>status</th><th>summary</th><th>evidence</th></tr>{_check_rows(t)}</table></section>"
        for t in report["tasks"]
    )
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>posttrain quality inspection</title>
<style>body{{font-family:sans-serif;margin:2em;max-width:70em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:2px 8px;text-align:left;vertical-align:top}}svg.plot{{display:block;margin:1.5em 0}}
tr.fail td{{background:#fde2e2}}tr.warn td{{background:#fff4d6}}pre{{max-height:30em;overflow:auto}}</style>
</head><body>
<h1>Quality inspection: {html.escape(str(summary.get("source", "tasks")))}</h1>
<p>{html.escape(_scope(summary))}</p>
{"".join(plots)}
<h2>Tasks</h2>
{tasks}
</body></html>
"""
