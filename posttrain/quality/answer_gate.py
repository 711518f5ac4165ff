"""The answer domains' quality gate as one call: inspect them (answer_inspection.py, with a
model also answer_signal.py), write report.json/md/html and quarantine.txt as the terminal
inspection does, and give training back the sources it may use: dropped domains gone, the
quarantined items of the others left out."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from posttrain.config import DomainConfig
from posttrain.errors import PosttrainError
from posttrain.quality.answer_inspection import (
    AnswerInspectOptions,
    DomainReport,
    inspect_answer_domain,
    load_failure,
)
from posttrain.quality.report import build_report, write_outputs
from posttrain.quality.scoring_worker import Scorer
from posttrain.tasks.answer_sources import answer_source
from posttrain.tasks.sources import TaskSource, WithoutItems


def inspect_answer_domains(
    domains: list[tuple[DomainConfig, TaskSource | str]],
    out: Path | str | None,
    options: AnswerInspectOptions | None = None,
    *,
    source_label: str = "answer domains",
    policy: str | None = None,
    samples: int = 4,
    probe_set: int = 8,
    reply_tokens: int = 256,
    on_domain: Callable[[DomainReport], None] | None = None,
) -> tuple[dict, list[DomainReport]]:
    """Each (config, its source, or why the source did not build) inspected; with `policy`,
    the signal check on `probe_set` usable items per domain kept so far. Writes the outputs to
    `out` (None: nowhere). Returns (the report, the domain reports)."""
    options = options or AnswerInspectOptions()
    started = time.perf_counter()
    reports: list[DomainReport] = []
    sources: dict[str, TaskSource] = {}
    with Scorer() as scorer:
        for cfg, source in domains:
            if isinstance(source, str):
                report = load_failure(cfg.name, cfg.source, source)
            else:
                report = inspect_answer_domain(cfg.name, cfg.source, source, cfg.heldout, cfg.seed, options, scorer)
                sources[cfg.name] = source
            reports.append(report)
            if on_domain is not None and policy is None:
                on_domain(report)
    if policy:
        from posttrain.quality.answer_signal import answer_pass_rates, apply_answer_signal

        probes = {r.id: _probe_items(r, sources[r.id], probe_set) for r in reports if not r.dropped}
        apply_answer_signal(reports, answer_pass_rates(probes, policy, samples, reply_tokens=reply_tokens))
        for report in reports:
            if on_domain is not None:
                on_domain(report)
    verdicts = Counter(r.verdict for r in reports)
    meta = {
        "source": source_label,
        "kind": "answer",
        "duration_s": round(time.perf_counter() - started, 3),
        "policy": policy,
        "samples": samples if policy else None,
        "probe_set": probe_set if policy else None,
        **asdict(options),
        "domains": {
            "n": len(reports),
            "kept": sum(not r.dropped for r in reports),
            "dropped": sum(r.dropped for r in reports),
            "verdicts": dict(sorted(verdicts.items())),
        },
        "items_checked": sum(r.items_checked for r in reports),
        "items_quarantined": sum(len(r.items) for r in reports),
    }
    report = build_report([entry for r in reports for entry in (r, *r.items)], meta)
    if out is not None:
        write_outputs(Path(out), report)
    return report, reports


def _probe_items(report: DomainReport, source: TaskSource, n: int) -> list:
    left_out = report.left_out()
    items = []
    for index in range(len(source)):
        if len(items) >= n:
            break
        if index not in left_out:
            items.append(source.get(index))
    return items


def dropped_line(report: DomainReport) -> str:
    return f"quality gate: domain {report.id!r} dropped ({report.verdict}): {' '.join(report.reason.split())[:300]}"


def item_line(item) -> str:
    return f"quality gate: {item.id} left out ({item.verdict}): {' '.join(item.reason.split())[:200]}"


def gate_answer_sources(
    configs: list[DomainConfig],
    sources: dict[str, TaskSource],
    out: Path,
    *,
    strict: bool = False,
    log: Callable[[str], None] = print,
) -> dict[str, TaskSource]:
    """`sources` with the answer domains of `configs` gated: a dropped domain removed, the
    quarantined items of a kept one left out, each named in one line to `log`. With `strict`
    any of them is an error instead; a gate that leaves no domain at all is an error either way."""
    domains = [(cfg, sources[cfg.name]) for cfg in configs]
    if not domains:
        return sources
    log(f"quality gate: inspecting {len(domains)} answer domains into {out}")
    _, reports = inspect_answer_domains(domains, out, source_label="the run's answer domains")
    lines = []
    gated = dict(sources)
    for report in reports:
        if report.dropped:
            lines.append(dropped_line(report))
            del gated[report.id]
            continue
        lines += [item_line(item) for item in report.items]
        if report.items:
            gated[report.id] = WithoutItems(sources[report.id], report.left_out())
    if strict and lines:
        raise PosttrainError("the quality gate found bad answer domains or items (--strict):\n" + "\n".join(lines))
    for line in lines:
        log(line)
    if not gated:
        raise PosttrainError(f"the quality gate dropped every domain (see {out}/report.md); nothing left to train on")
    kept, left_out = sum(not r.dropped for r in reports), sum(len(r.items) for r in reports)
    log(f"quality gate: {kept} of {len(reports)} answer domains kept, {left_out} items left out")
    return gated


def build_answer_domains(configs: list[DomainConfig], base_dir: Path) -> list[tuple[DomainConfig, TaskSource | str]]:
    """Each config with its source, or the one line saying why it did not build."""
    built: list[tuple[DomainConfig, TaskSource | str]] = []
    for cfg in configs:
        try:
            built.append((cfg, answer_source(cfg, base_dir)))
        except (PosttrainError, ValueError, OSError) as exc:
            built.append((cfg, f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"))
    return built
