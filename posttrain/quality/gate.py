"""The gate: run an inspection (or read its quarantine list) and keep only the tasks that
passed it. `posttrain inspect`, `posttrain train` (quarantine / quality_gate) and
`posttrain eval` (--quarantine / --quality-gate) all come through here."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from posttrain.quality.inspector import InspectOptions, TaskReport, apply_signal, inspect_dirs, task_dirs
from posttrain.quality.quarantine import read_quarantine, split_quarantined
from posttrain.quality.report import build_report, write_outputs


def run_inspection(
    source: Path | str,
    out: Path | str,
    options: InspectOptions | None = None,
    *,
    policy: str | None = None,
    samples: int = 4,
    policy_max_steps: int = 10,
    policy_reply_tokens: int = 256,
    on_task: Callable[[TaskReport], None] | None = None,
    on_episode=None,
    dirs: list[Path] | None = None,
) -> dict:
    """Inspect every task under `source` (or just `dirs`); write report.json/md/html and
    quarantine.txt to `out`. Returns the report."""
    options = options or InspectOptions()
    started = time.perf_counter()
    dirs = dirs if dirs is not None else task_dirs(source)
    reports = inspect_dirs(dirs, options, on_task)
    execution_s = time.perf_counter() - started
    if policy:
        from posttrain.quality.signal_check import policy_pass_rates

        candidates = [r.task for r in reports if r.verdict == "ok" and r.task is not None]
        rates = policy_pass_rates(
            candidates,
            policy,
            samples,
            max_steps=policy_max_steps,
            reply_tokens=policy_reply_tokens,
            concurrency=options.concurrency,
            backend=options.backend,
            on_episode=on_episode,
        )
        apply_signal(reports, rates)
    meta = {
        "source": str(source),
        "duration_s": round(time.perf_counter() - started, 3),
        "execution_s": round(execution_s, 3),
        "policy": policy,
        "samples": samples if policy else None,
        **{k: v for k, v in asdict(options).items() if k not in ("backend", "cache_dir")},
    }
    report = build_report(reports, meta)
    write_outputs(Path(out), report)
    return report


def gate(
    tasks: list,
    quarantine: Path | str | None = None,
    *,
    inspect_source: Path | str | None = None,
    inspect_out: Path | str | None = None,
    options: InspectOptions | None = None,
    log=print,
) -> list:
    """The tasks not quarantined. With `quarantine`, read that list; with `inspect_source`,
    inspect first (into `inspect_out`) and use the list it writes. Logs how many were skipped
    and why."""
    if quarantine is None and inspect_source is None:
        return tasks
    if quarantine is None:
        out = Path(inspect_out or "quality")
        dirs = [Path(t.metadata["task_dir"]) for t in tasks if t.metadata.get("task_dir")]
        log(f"quality gate: inspecting {len(dirs)} tasks into {out}")
        run_inspection(inspect_source, out, options, dirs=dirs)
        quarantine = out / "quarantine.txt"
    keep, skipped = split_quarantined(tasks, read_quarantine(quarantine))
    if skipped:
        log(f"quality gate: skipping {len(skipped)} of {len(tasks)} tasks quarantined in {quarantine}:")
        for task_id, reason in skipped:
            log(f"  {task_id}: {reason}")
    else:
        log(f"quality gate: no task quarantined in {quarantine} ({len(tasks)} kept)")
    return keep
