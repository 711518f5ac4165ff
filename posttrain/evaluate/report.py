"""report.md and report.html of an eval run. The HTML is one self-contained file with inline
SVG plots (no script, no network), so it opens anywhere, offline. Each attempt is a row with one
outcome label (`passed` or its failure category) that links to what the agent did: each turn's
reply and each command with its output (cut at OUTPUT_CHARS), and the trajectory's JSON file."""

from __future__ import annotations

import html
import json
from pathlib import Path

from posttrain.evaluate.metrics import outcome
from posttrain.observe.svg_charts import bar_chart, histogram

OUTPUT_CHARS = 1500  # of each reply and command output shown in the report; the JSON has all


def write_reports(out: Path, summary: dict, perf: dict, rows: list[dict]) -> None:
    episodes = {}
    for row in rows:
        try:
            episodes[row["trajectory"]] = json.loads((out / row["trajectory"]).read_text())
        except (OSError, json.JSONDecodeError):
            continue  # the attempt's row still links to the file
    (out / "report.md").write_text(markdown_report(summary, perf, rows))
    (out / "report.html").write_text(html_report(summary, perf, rows, episodes))


def _fmt(value, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _attempt_order(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda r: (r["task_id"], r["attempt"]))


def markdown_report(summary: dict, perf: dict, rows: list[dict] | None = None) -> str:
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
        *_markdown_attempts(rows or []),
    ]
    return "\n".join(lines)


def _markdown_attempts(rows: list[dict]) -> list[str]:
    if not rows:
        return []
    return [
        "## Attempts",
        "",
        "| task | attempt | outcome | reward | steps | trajectory |",
        "|---|---|---|---|---|---|",
        *(
            f"| {r['task_id']} | {r['attempt']} | {outcome(r)} | {_fmt(r['reward'])} | {r['steps']} | "
            f"[{r['trajectory']}]({r['trajectory']}) |"
            for r in _attempt_order(rows)
        ),
        "",
    ]


def html_report(summary: dict, perf: dict, rows: list[dict], episodes: dict[str, dict] | None = None) -> str:
    """`episodes`: each attempt's trajectory (its JSON) by the row's `trajectory` path."""
    plots = [
        bar_chart("Pass rate by category", list(summary["pass_rate_by_category"].items()), 1.0, "pass-by-category"),
        bar_chart(
            "Failure modes (attempts)",
            [(k, float(v)) for k, v in summary["failure_modes"].items()],
            plot_id="failure-modes",
            fmt="{:.0f}",
        ),
        histogram("Steps (turns) per attempt", [float(r["steps"]) for r in rows], plot_id="steps", integer=True),
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
td,th{{border:1px solid #ccc;padding:2px 8px;text-align:left}}svg.plot{{display:block;margin:1.5em 0}}
section.episode{{border-top:1px solid #ccc;margin-top:1em}}section.episode:target{{background:#fff8e0}}
pre{{background:#f6f6f6;padding:4px;white-space:pre-wrap;max-height:20em;overflow:auto}}</style>
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
{_attempts_html(rows, episodes or {})}
</body></html>
"""


def _invalid_section(summary: dict) -> list[str]:
    """The task directories that did not load, and why: not run, not in any rate above."""
    invalid = summary.get("invalid_tasks") or []
    if not invalid:
        return []
    rows = [f"| {item['task']} | {item['reason'].replace('|', '/')} |" for item in invalid]
    return [f"## Invalid tasks ({len(invalid)}, not run)", "", "| task | reason |", "|---|---|", *rows, ""]


def _cut(text: str) -> str:
    return (
        text
        if len(text) <= OUTPUT_CHARS
        else text[:OUTPUT_CHARS] + f"\n... ({len(text) - OUTPUT_CHARS} more characters)"
    )


def call_text(call: dict) -> str:
    """A tool call as the agent wrote it: a shell command as `$ COMMAND`, another tool as its
    name and arguments."""
    arguments = call.get("arguments")
    if isinstance(arguments, dict) and isinstance(arguments.get("command"), str):
        return f"$ {arguments['command']}"
    return f"{call.get('name')} {arguments if isinstance(arguments, str) else json.dumps(arguments)}"


def _attempts_html(rows: list[dict], episodes: dict[str, dict]) -> str:
    """The attempts table (one outcome label each, a link to the episode) and the episodes."""
    if not rows:
        return ""
    ordered = _attempt_order(rows)
    table = "".join(
        f'<tr class="attempt"><td>{html.escape(r["task_id"])}</td><td>{r["attempt"]}</td>'
        f'<td class="outcome">{html.escape(outcome(r))}</td><td>{_fmt(r["reward"])}</td><td>{r["steps"]}</td>'
        f"<td>{r['tool_calls_ok']}/{r['tool_calls']}</td>"
        f'<td><a class="episode-link" href="#episode-{i}">what the agent did</a></td></tr>'
        for i, r in enumerate(ordered)
    )
    sections = "".join(_episode_html(i, r, episodes.get(r["trajectory"])) for i, r in enumerate(ordered))
    return (
        "<h2>Attempts</h2>\n<table><tr><th>task</th><th>attempt</th><th>outcome</th><th>reward</th><th>steps</th>"
        f"<th>tool calls ok</th><th>episode</th></tr>{table}</table>\n<h2>Episodes</h2>\n{sections}"
    )


def _episode_html(index: int, row: dict, trajectory: dict | None) -> str:
    path = html.escape(row["trajectory"])
    head = (
        f'<section class="episode" id="episode-{index}"><h3>{html.escape(row["task_id"])} attempt {row["attempt"]}: '
        f"{html.escape(outcome(row))}</h3><p>stop reason {html.escape(str(row.get('stop_reason') or '-'))}, "
        f'reward {_fmt(row["reward"])}; the whole trajectory: <a href="{path}">{path}</a></p>'
    )
    if trajectory is None:
        return head + "<p>(the trajectory file could not be read)</p></section>"
    turns = []
    for turn in trajectory.get("turns") or []:
        calls = "".join(
            f'<div class="call"><pre class="command">{html.escape(call_text(c))}</pre>'
            f"<p>{html.escape(str(c.get('name')))}: exit {c.get('exit_code')}"
            + (f", error {html.escape(str(c['error']))}" if c.get("error") else "")
            + f'</p><pre class="output">{html.escape(_cut(str(c.get("observation") or "")))}</pre></div>'
            for c in turn.get("tool_calls") or []
        )
        turns.append(
            f'<div class="turn"><h4>turn {turn.get("index")}</h4>'
            f'<pre class="reply">{html.escape(_cut(str(turn.get("text") or "")))}</pre>{calls}</div>'
        )
    return head + "".join(turns) + "</section>"
