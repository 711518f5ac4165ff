"""Metric records in the Prometheus text format: the latest step of every run the dashboard
shows (dashboard /metrics), and a live run's own endpoint ([logging] metrics_port).

A key `<group>/<domain>/<name>` becomes `posttrain_<group>_<name>{run, domain}` and
`<group>/<domain>` (reward/add, eval/add) `posttrain_<group>{run, domain}`, so a domain is a
label, not part of a metric's name; `failures/<mode>` labels the failure mode instead;
`dispatch/<name>` becomes `posttrain_dispatch_<name>` (dispatch counts are not per domain);
any other key its name. Every run also gets `posttrain_live` (1 while it is being written);
`step` is `posttrain_step`."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import Collector, CollectorRegistry

_UNLABELLED_GROUPS = ("dispatch",)
_LABEL_OF_GROUP = {"failures": "mode"}  # what the middle part of a group's keys is; else a domain


def metric_name(key: str) -> tuple[str, dict[str, str]]:
    """(the Prometheus name, its labels besides the run's) of a metrics.jsonl key."""
    parts = key.split("/")
    label = _LABEL_OF_GROUP.get(parts[0], "domain")
    if len(parts) == 3 and parts[0] not in _UNLABELLED_GROUPS:
        name, labels = f"{parts[0]}_{parts[2]}", {label: parts[1]}
    elif len(parts) == 2 and parts[0] not in _UNLABELLED_GROUPS:
        name, labels = parts[0], {label: parts[1]}
    else:
        name, labels = "_".join(parts), {}
    return "posttrain_" + re.sub(r"[^a-zA-Z0-9_]", "_", name), labels


class LatestStepCollector(Collector):
    def __init__(self, latest_records) -> None:
        """`latest_records()` -> [(run name, live?, the run's last record or None)]."""
        self.latest_records = latest_records

    def collect(self) -> Iterator[GaugeMetricFamily]:
        families: dict[str, GaugeMetricFamily] = {}
        label_names: dict[str, list[str]] = {}

        def add(name: str, labels: dict[str, str], value: float, help_text: str) -> None:
            if name not in families:
                families[name] = GaugeMetricFamily(name, help_text, labels=sorted(labels))
                label_names[name] = sorted(labels)
            elif label_names[name] != sorted(labels):
                return  # a key whose labels clash with another's of the same name (none today)
            families[name].add_metric([labels[k] for k in sorted(labels)], value)

        for run, live, record in self.latest_records():
            add("posttrain_live", {"run": run}, float(live), "1 while the run's directory is being written")
            if record is None:
                continue
            for key, value in sorted(record.items()):
                if not _is_number(value):
                    continue
                name, labels = metric_name(key)
                add(name, {"run": run, **labels}, float(value), f"{key} at the run's latest step")
        yield from families.values()


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def registry_of(latest_records) -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(LatestStepCollector(latest_records))
    return registry


def exposition(latest_records) -> bytes:
    return generate_latest(registry_of(latest_records))
