"""Which metrics go on which chart, and the step-aligned series the charts draw.

A panel lists key patterns; every numeric key of the run that matches goes on it, so domains
and metrics that a run has appear without the dashboard knowing them. Keys on no panel are
still served (the page offers them as extra charts). Past MANY_DOMAINS domains a curve per
domain is unreadable: the panels keep the keys over all domains, and the per-domain keys are
left to the page's table of domains (domain_table.py) and to the extra charts."""

from __future__ import annotations

import re
from typing import Any

PANELS: list[tuple[str, tuple[str, ...]]] = [
    ("Reward per domain", (r"reward_mean", r"reward/[^/]+")),
    ("Pass rate per domain", (r"pass_rate", r"mixture/[^/]+/pass_rate")),
    ("Held-out accuracy per domain (monitor, Wilson 95% CI)", (r"monitor/[^/]+/(accuracy|ci_low|ci_high)",)),
    ("Held-out accuracy (eval_every)", (r"eval/.+",)),
    ("Loss", (r"loss", r"nll")),
    ("KL", (r"kl",)),
    ("Entropy", (r"entropy",)),
    ("Clip fraction", (r"clip_fraction", r"truncated_fraction")),
    ("Grad norm", (r"grad_norm",)),
    ("Engine vs trainer logprob mismatch", (r"logprob_mismatch_max", r"logprob_mismatch_mean", r"tis_weight_mean")),
    ("Policy-version gap", (r"staleness_max", r"staleness_mean", r"max_staleness")),
    ("Tokens/s", (r"tokens_per_s", r"rollout_tokens_per_s")),
    ("Step time by phase (s)", (r"step_s", r"rollout_s", r"train_time_s", r"trainer_wait_s")),
    ("Idle share", (r"trainer_idle_frac", r"rollout_idle_frac")),
    # scheduler/: the same counters in runs made before the package was renamed dispatch
    ("Dispatch", (r"(dispatch|scheduler)/(workers|retries|failed|worker_deaths|preemptions)",)),
    ("Episodes left out (infrastructure failures)", (r"episodes_masked", r"masked/.+")),
    ("Mixture weights", (r"mixture/[^/]+/weight",)),
    ("Token share per domain", (r"mixture/[^/]+/token_share",)),
    ("Gradient conflict (cosine)", (r"conflict/.+/(cosine|min_group_cosine)", r"conflict/min_cosine")),
]
# the keys that average a panel's per-domain series
MEAN_KEYS = frozenset({"reward_mean", "pass_rate", "eval/overall"})
MANY_DOMAINS = 12
_COMPILED = [(title, [re.compile(p + r"\Z") for p in patterns]) for title, patterns in PANELS]


def numeric_keys(records: list[dict[str, Any]]) -> list[str]:
    keys = {k for r in records for k, v in r.items() if _is_number(v) and k != "step"}
    return sorted(keys)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def panels(keys: list[str]) -> list[dict[str, Any]]:
    """[{title, keys, bands, means}] for the panels with at least one key; `bands` pairs each
    monitor accuracy's ci_high and ci_low keys, which the chart fills between; `means` are the
    keys that average over domains, listed first so that they are drawn first (dashed, under the
    domains: a run of one domain has its domain's line equal to the mean, and drawn last the
    mean would hide it)."""
    keys = _panel_keys(keys)
    out = []
    for title, patterns in _COMPILED:
        matched = [k for k in keys if any(p.match(k) for p in patterns)]
        if not matched:
            continue
        means = [k for k in matched if k in MEAN_KEYS]
        matched = means + [k for k in matched if k not in MEAN_KEYS]
        bands = [
            [k.replace("/accuracy", "/ci_high"), k.replace("/accuracy", "/ci_low")]
            for k in matched
            if k.startswith("monitor/")
            and k.endswith("/accuracy")
            and k.replace("/accuracy", "/ci_high") in matched
            and k.replace("/accuracy", "/ci_low") in matched
        ]
        out.append({"title": title, "keys": matched, "bands": bands, "means": means})
    return out


def _panel_keys(keys: list[str]) -> list[str]:
    """`keys`, less those of one domain (or pair of domains) when the run has more than
    MANY_DOMAINS domains."""
    domains = {k.split("/")[1] for k in keys if k.startswith("reward/")}
    if len(domains) <= MANY_DOMAINS:
        return keys
    return [k for k in keys if not (k.count("/") >= 1 and _of_domains(k.split("/")[1], domains))]


def _of_domains(segment: str, domains: set[str]) -> bool:
    return segment in domains or ("|" in segment and set(segment.split("|")) <= domains)


def unpanelled(keys: list[str]) -> list[str]:
    on_panels = {k for p in panels(keys) for k in p["keys"]}
    return [k for k in keys if k not in on_panels]


def series(records: list[dict[str, Any]], keys: list[str]) -> dict[str, Any]:
    """Steps in order with one value list per key (None where a step lacks the key). Records of
    the same step are merged, the later's values winning (an SFT run writes a rejection-sampling
    round's record at the step of the round's last update). A monitor evaluation that ran in the
    background is drawn at the step whose weights it evaluated (`monitor/step`)."""
    by_step: dict[float, dict[str, Any]] = {}
    for record in records:
        evaluated = record.get("monitor/step", record["step"])
        by_step.setdefault(record["step"], {}).update(
            {k: v for k, v in record.items() if evaluated == record["step"] or not k.startswith("monitor/")}
        )
        if evaluated != record["step"]:
            by_step.setdefault(evaluated, {}).update({k: v for k, v in record.items() if k.startswith("monitor/")})
    steps = sorted(by_step)
    return {
        "steps": steps,
        "values": {k: [_value(by_step[s].get(k)) for s in steps] for k in keys},
    }


def _value(value: Any) -> float | None:
    return float(value) if _is_number(value) and value == value else None  # NaN is not JSON


def alarms(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Seesaw alarms by the step whose record holds them, each as one line of text."""
    found = []
    for record in records:
        for alarm in record.get("seesaw_alarms") or []:
            found.append({"step": record["step"], "text": alarm_text(alarm)})
    return found


def alarm_text(alarm: Any) -> str:
    if not isinstance(alarm, dict):
        return str(alarm)
    falling = alarm.get("falling") or {}
    text = f"{alarm.get('kind', 'alarm')}: {falling.get('domain', '?')} fell"
    if "accuracy_from" in falling and "accuracy_to" in falling:
        text += f" {falling['accuracy_from']:.3f} -> {falling['accuracy_to']:.3f}"
    for rising in alarm.get("rising") or []:
        text += f"; {rising.get('domain', '?')} rose"
    return text
