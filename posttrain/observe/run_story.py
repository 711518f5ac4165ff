"""A training run's story, read from the files the run wrote: what ran (config, stages), how
held-out pass@1 moved, each domain's final reward, steps, wall time and where the checkpoints
are. `posttrain runs show RUN` prints it; the dashboard shows the same comparison.

The comparison has one column per evaluation: base -> SFT -> RL for a run with a warm start
(summary.json's `stages` and `heldout` table; while RL trains, sft/eval_base.json and
sft/eval_sft.json), before -> after otherwise. Its rows: overall, each held-out set (instances,
templates, families, handwritten) and each family or domain. A row whose item count is known
carries each value's Wilson 95% interval and the paired bootstrap interval of each change that
summary.json holds."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

from posttrain.curriculum.seesaw import wilson_interval
from posttrain.errors import PosttrainError
from posttrain.observe.metrics import read_metrics

STAGE_LABELS = {"base": "base", "sft": "SFT", "rl": "RL", "before": "before", "after": "after"}
# summary.json sorts its keys: shown in the pipeline's order (pipeline/heldout_sets.py)
HELDOUT_SET_ORDER = ("instances", "templates", "families", "handwritten")
CHANGE_ORDER = ("sft_minus_base", "rl_minus_base", "rl_minus_sft")
_STEP_DIR = re.compile(r"step-(\d+)\Z")


class NotARunDirectory(PosttrainError):
    pass


def read_story(run: Path) -> dict[str, Any]:
    """Everything `posttrain runs show` prints, as data. Raises NotARunDirectory (one line) for a
    path that is not a training run's directory; a damaged file is named in `problems`."""
    if not run.is_dir():
        raise NotARunDirectory(f"{run}: no such run directory")
    if not (run / "config.toml").is_file() and not (run / "metrics.jsonl").is_file():
        raise NotARunDirectory(f"{run}: not a training run directory (it has no config.toml or metrics.jsonl)")
    problems: list[str] = []
    config = _read_toml(run / "config.toml", problems)
    summary = _read_json(run / "summary.json", problems) or {}
    records = read_metrics(run / "metrics.jsonl")
    sft_records = read_metrics(run / "sft" / "metrics.jsonl")
    return {
        "run": str(run),
        "name": run.resolve().name,
        "config": str(run / "config.toml"),
        "model": (config.get("model") or {}).get("name"),
        "mode": config.get("mode", "sync"),
        "domains": [d.get("name") for d in config.get("domains") or []],
        "finished": bool(summary),
        "stages": _stages(run, config, summary, records, sft_records),
        "comparison": comparison(summary, run, problems),
        "final_reward": final_reward(records),
        "wall_s": summary.get("wall_s"),
        "sft_train_s": sum(r.get("train_time_s", 0.0) for r in sft_records) if sft_records else None,
        "checkpoints": _checkpoints(run),
        "problems": problems,
    }


def _read_json(path: Path, problems: list[str]) -> Any:
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        problems.append(f"{path}: not JSON ({exc})")
        return None


def _read_toml(path: Path, problems: list[str]) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        problems.append(f"{path}: not TOML ({exc})")
        return {}


def _stages(run: Path, config: dict, summary: dict, records: list[dict], sft_records: list[dict]) -> list[dict]:
    """The stages the config asks for, each with how far it got."""
    stages = []
    if "sft" in config:
        evaluate = (config.get("sft") or {}).get("evaluate", True)
        if evaluate:
            stages.append({"name": "base eval", "done": (run / "sft" / "eval_base.json").is_file()})
        sft_steps = max((int(r["step"]) for r in sft_records if "step" in r), default=0)
        stages.append({"name": "SFT", "done": (run / "sft" / "model" / "config.json").is_file(), "steps": sft_steps})
    planned = (config.get("train") or {}).get("steps") or summary.get("steps")
    last = max((int(r["step"]) for r in records if "step" in r), default=0)
    stages.append({"name": "RL", "done": bool(summary), "steps": last, "steps_planned": planned})
    return stages


def comparison(summary: dict, run: Path | None = None, problems: list[str] | None = None) -> dict[str, Any]:
    """{"columns": [stage, ...], "rows": [{label, kind, n, values, ci95, changes}]}: empty
    columns when no evaluation has been written yet."""
    if summary.get("stages"):
        return _warm_start_comparison(summary)
    if summary.get("eval_before") and summary.get("eval_after"):
        return _before_after_comparison(summary)
    return _partial_comparison(run, problems if problems is not None else []) if run else {"columns": [], "rows": []}


def _row(label: str, kind: str, values: dict, n: int | None, changes: dict | None = None) -> dict[str, Any]:
    ci95 = {}
    if n:
        ci95 = {k: list(wilson_interval(round(v * n), n)) for k, v in values.items() if isinstance(v, int | float)}
    return {"label": label, "kind": kind, "n": n, "values": values, "ci95": ci95, "changes": changes or {}}


def _warm_start_comparison(summary: dict) -> dict[str, Any]:
    stages = summary["stages"]
    columns = [c for c in ("base", "sft", "rl") if c in stages]
    scores = {c: stages[c].get("heldout_pass_at_1") or {} for c in columns}
    n = next((stages[c].get("n_heldout") for c in columns if stages[c].get("n_heldout")), None)
    overall = {c: scores[c].get("overall") for c in columns}
    changes = {}
    for key in CHANGE_ORDER:
        later, earlier = key.split("_minus_")
        interval = summary.get(f"{key}_ci95")
        if interval and overall.get(later) is not None and overall.get(earlier) is not None:
            changes[key] = {"delta": overall[later] - overall[earlier], "ci95": interval}
    rows = [_row("overall", "overall", overall, n, changes)]
    heldout = summary.get("heldout") or {}
    for name in sorted(heldout, key=lambda s: (HELDOUT_SET_ORDER + (s,)).index(s)):
        entry = heldout[name]
        values = {c: entry.get(c) for c in columns}
        set_changes = {k: entry[k] for k in CHANGE_ORDER if isinstance(entry.get(k), dict)}
        rows.append(_row(name, "heldout set", values, entry.get("n"), set_changes))
    families = sorted({k for c in columns for k in scores[c] if k != "overall"})
    rows += [_row(f, "family", {c: scores[c].get(f) for c in columns}, None) for f in families]
    by_steps = {c: stages[c].get("by_steps_needed") or {} for c in columns}
    for steps in sorted({k for c in columns for k in by_steps[c]}, key=int):
        label = f"{steps} command" + ("" if steps == "1" else "s")
        rows.append(_row(label, "commands needed", {c: by_steps[c].get(steps) for c in columns}, None))
    return {"columns": columns, "rows": rows}


def _before_after_comparison(summary: dict) -> dict[str, Any]:
    before, after = summary["eval_before"], summary["eval_after"]
    n = summary.get("n_heldout")
    overall_change = {"after_minus_before": {"delta": summary.get("delta"), "ci95": summary.get("delta_ci95")}}
    rows = [
        _row("overall", "overall", {"before": before.get("overall"), "after": after.get("overall")}, n, overall_change)
    ]
    per_domain_delta = summary.get("per_domain_delta") or {}
    for domain in sorted(set(before.get("per_domain") or {}) | set(after.get("per_domain") or {})):
        delta = per_domain_delta.get(domain) or {}
        changes = {"after_minus_before": {"delta": delta["delta"], "ci95": delta.get("delta_ci95")}} if delta else {}
        values = {
            "before": (before.get("per_domain") or {}).get(domain),
            "after": (after.get("per_domain") or {}).get(domain),
        }
        rows.append(_row(domain, "domain", values, delta.get("n"), changes))
    return {"columns": ["before", "after"], "rows": rows}


def _partial_comparison(run: Path, problems: list[str]) -> dict[str, Any]:
    """A run still training (or stopped): the evaluations written so far."""
    found = [
        (name, _read_json(path, problems))
        for name, path in (
            ("base", run / "sft" / "eval_base.json"),
            ("sft", run / "sft" / "eval_sft.json"),
        )
    ]
    if not any(result for _, result in found):
        found = [("before", _read_json(run / "eval_before.json", problems))]
    found = [(name, result) for name, result in found if isinstance(result, dict)]
    if not found:
        return {"columns": [], "rows": []}
    columns = [name for name, _ in found]
    n = len(found[0][1].get("per_item") or {}) or None
    rows = [_row("overall", "overall", {name: r.get("overall") for name, r in found}, n)]
    groups = {name: (r.get("per_family") or r.get("per_domain") or {}) for name, r in found}
    for group in sorted({g for scores in groups.values() for g in scores}):
        rows.append(_row(group, "family", {name: groups[name].get(group) for name in columns}, None))
    return {"columns": columns, "rows": rows}


def final_reward(records: list[dict]) -> dict[str, Any] | None:
    """The last step's mean training reward, and each domain's at the last step that sampled it
    (a step's batch need not hold every domain): {"step", "mean", "per_domain": {d: {value, step}}}."""
    with_reward = [r for r in records if "reward_mean" in r]
    if not with_reward:
        return None
    per_domain: dict[str, dict] = {}
    for record in with_reward:
        for key, value in record.items():
            if key.startswith("reward/"):
                per_domain[key.split("/", 1)[1]] = {"value": value, "step": record.get("step")}
    last = with_reward[-1]
    return {"step": last.get("step"), "mean": last["reward_mean"], "per_domain": dict(sorted(per_domain.items()))}


def _checkpoints(run: Path) -> list[str]:
    found = []
    for folder in (run / "checkpoints", run / "sft" / "checkpoints"):
        if folder.is_dir():
            steps = sorted((int(m.group(1)), child) for child in folder.iterdir() if (m := _STEP_DIR.match(child.name)))
            found += [str(child) for _, child in steps]
    if (run / "sft" / "model").is_dir():
        found.append(str(run / "sft" / "model"))
    return found


# ---- text ------------------------------------------------------------------------------------


def _score(value: Any) -> str:
    return "-" if not isinstance(value, int | float) else f"{value:.3f}"


def _interval(pair: Any) -> str:
    return f"[{pair[0]:.2f}, {pair[1]:.2f}]" if pair else ""


def story_lines(story: dict[str, Any]) -> list[str]:
    """The story as plain text, one line each."""
    lines = [
        f"run {story['name']} ({story['run']}), {'finished' if story['finished'] else 'not finished'}",
        f"config {story['config']}: model {story['model'] or '?'}, {story['mode']}, "
        f"domains {', '.join(d for d in story['domains'] if d) or '?'}",
        "stages: " + " -> ".join(_stage_text(s) for s in story["stages"]),
    ]
    table = story["comparison"]
    if table["columns"]:
        lines += ["", "held-out pass@1 (" + " -> ".join(STAGE_LABELS.get(c, c) for c in table["columns"]) + ")"]
        for row in table["rows"]:
            lines.append(_row_text(row, table["columns"]))
    else:
        lines += ["", "held-out pass@1: no evaluation written yet"]
    reward = story["final_reward"]
    if reward:
        per_domain = ", ".join(
            f"{d} {r['value']:.3f}" + ("" if r["step"] == reward["step"] else f" (step {r['step']})")
            for d, r in reward["per_domain"].items()
        )
        lines += [
            "",
            f"final reward (step {reward['step']}): mean {reward['mean']:.3f}"
            + (f"; {per_domain}" if per_domain else ""),
        ]
    times = []
    if story["sft_train_s"] is not None:
        times.append(f"SFT training {story['sft_train_s']:.0f} s")
    if story["wall_s"] is not None:
        times.append(f"RL wall time {story['wall_s']:.0f} s")
    if times:
        lines.append("time: " + ", ".join(times))
    lines.append("checkpoints: " + (", ".join(story["checkpoints"]) if story["checkpoints"] else "none"))
    lines += [f"problem: {p}" for p in story["problems"]]
    return lines


def _stage_text(stage: dict) -> str:
    text = stage["name"]
    if "steps_planned" in stage:
        text += f" {stage['steps']}/{stage['steps_planned'] or '?'} steps"
    elif "steps" in stage:
        text += f" {stage['steps']} steps"
    return text + ("" if stage["done"] else " (not done)")


def _row_text(row: dict, columns: list[str]) -> str:
    label = {
        "family": f"family {row['label']}",
        "heldout set": f"{row['label']} (held-out set)",
        "commands needed": f"needing {row['label']}",
    }.get(row["kind"], row["label"])
    cells = []
    for column in columns:
        value = row["values"].get(column)
        interval = row["ci95"].get(column)
        cells.append(_score(value) + (f" {_interval(interval)}" if interval else ""))
    text = f"  {label}" + (f", n={row['n']}" if row["n"] else "") + ": " + " -> ".join(cells)
    changes = [
        f"{key.replace('_minus_', ' - ').replace('sft', 'SFT').replace('rl', 'RL')} "
        f"{change['delta']:+.3f} {_interval(change.get('ci95'))}".rstrip()
        for key, change in row["changes"].items()
        if isinstance(change.get("delta"), int | float)
    ]
    return text + (f"  ({'; '.join(changes)})" if changes else "")
