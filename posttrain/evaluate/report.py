"""report.md and report.html of an eval run. The HTML is one self-contained file with inline
SVG plots (no script, no network), so it opens anywhere, offline."""

from __future__ import annotations

import html
from pathlib import Path

from posttrain.observe.svg_charts import bar_chart, histogram


def write_reports(out: Path, summary: dict, perf: dict, rows: list[dict]) -> None:
    (out / "report.md").write_text(markdown_report(summary, perf))
    (out / "report.html").write_text(html_report(summary, perf, rows))


def _fmt(value, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def markdown_report(summary: dict, perf: dict) -> str:
    lines = [
        f"# Eval: {summary.get('agent')} on {summary.get('task_source') or 'tasks'}",
        "",
        f"model `{summary.get('model') or '-'}`, {summary['n_tasks']} tasks × {summary.get('attempts')} attempts "
        f"({summary['n_attempts']} attempts), seed {summary.get('seed')}",
        "",
        "| metric | value |",
        "|---|---|",
        f"| mean reward | {_fmt(summary['mean_reward'])} |",
        *(f"| pass@{k} | {_fmt(v)} |" for k, v in summary["pass_at_k"].items()),
        f"| tool-call accuracy | {_fmt(summary['tool_call_accuracy'])} |",
        f"| tokens in / out | {summary['tokens']['in']} / {summary['tokens']['out']} |",
        f"| prefix-cache hit rate | {_fmt(perf['cache_hit_rate'])} |",
        f"| cost | {_fmt(summary['cost'], 4)} |",
        f"| steps mean / p90 / max | {_fmt(summary['steps']['mean'], 1)} / {_fmt(summary['steps']['p90'], 1)} / "
        f"{_fmt(summary['steps']['max'], 1)} |",
        *(
            f"| {phase} time mean / p90 (s) | {_fmt(d['mean'], 2)} / {_fmt(d['p90'], 2)} |"
            for phase, d in perf["time_s"].items()
        ),
        "",
        "## Failure modes",
        "",
        "| failure | attempts |",
        "|---|---|",
        *(f"| {k} | {v} |" for k, v in summary["failure_modes"].items()),
        "",
        *_invalid_section(summary),
        "## Pass rate by category",
        "",
        "| category | pass@1 |",
        "|---|---|",
        *(f"| {k} | {_fmt(v)} |" for k, v in summary["pass_rate_by_category"].items()),
        "",
        "## Tasks",
        "",
        "| task | category | passed / attempts | mean reward | mean steps |",
        "|---|---|---|---|---|",
        *(
            f"| {task} | {t['category']} | {t['passed']} / {t['attempts']} | {_fmt(t['mean_reward'])} | "
            f"{_fmt(t['mean_steps'], 1)} |"
            for task, t in summary["tasks"].items()
        ),
        "",
    ]
    return "\n".join(lines)


def html_report(summary: dict, perf: dict, rows: list[dict]) -> str:
    plots = [
        bar_chart("Pass rate by category", list(summary["pass_rate_by_category"].items()), 1.0, "pass-by-category"),
        bar_chart(
            "Failure modes (attempts)",
            [(k, float(v)) for k, v in summary["failure_modes"].items()],
            plot_id="failure-modes",
            fmt="{:.0f}",
        ),
        histogram("Steps per attempt", [float(r["steps"]) for r in rows], plot_id="steps"),
        histogram(
            "Agent time per attempt", [float(r["time_s"]["agent"]) for r in rows], plot_id="agent-time", unit="s"
        ),
    ]
    table = "".join(
        f"<tr><td>{html.escape(task)}</td><td>{html.escape(t['category'])}</td><td>{t['passed']} / {t['attempts']}</td>"
        f"<td>{_fmt(t['mean_reward'])}</td><td>{_fmt(t['mean_steps'], 1)}</td></tr>"
        for task, t in summary["tasks"].items()
    )
    metrics = "".join(f"<tr><td>pass@{k}</td><td>{_fmt(v)}</td></tr>" for k, v in summary["pass_at_k"].items())
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>posttrain eval report</title>
<style>body{{font-family:sans-serif;margin:2em;max-width:60em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:2px 8px;text-align:left}}svg.plot{{display:block;margin:1.5em 0}}</style>
</head><body>
<h1>Eval: {html.escape(str(summary.get("agent")))} on {html.escape(str(summary.get("task_source") or "tasks"))}</h1>
<p>model <code>{html.escape(str(summary.get("model") or "-"))}</code>, {summary["n_tasks"]} tasks,
{summary["n_attempts"]} attempts</p>
<table><tr><th>metric</th><th>value</th></tr>
<tr><td>mean reward</td><td>{_fmt(summary["mean_reward"])}</td></tr>{metrics}
<tr><td>tool-call accuracy</td><td>{_fmt(summary["tool_call_accuracy"])}</td></tr>
<tr><td>tokens in / out</td><td>{summary["tokens"]["in"]} / {summary["tokens"]["out"]}</td></tr>
<tr><td>prefix-cache hit rate</td><td>{_fmt(perf["cache_hit_rate"])}</td></tr>
<tr><td>cost</td><td>{_fmt(summary["cost"], 4)}</td></tr></table>
{"".join(plots)}
<h2>Tasks</h2>
<table><tr><th>task</th><th>category</th><th>passed / attempts</th><th>mean reward</th><th>mean steps</th></tr>
{table}</table>
</body></html>
"""


def _invalid_section(summary: dict) -> list[str]:
    """The task directories that did not load, and why: not run, not in any rate above."""
    invalid = summary.get("invalid_tasks") or []
    if not invalid:
        return []
    rows = [f"| {item['task']} | {item['reason'].replace('|', '/')} |" for item in invalid]
    return [f"## Invalid tasks ({len(invalid)}, not run)", "", "| task | reason |", "|---|---|", *rows, ""]
