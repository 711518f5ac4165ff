"""summary.json's per-domain change: the paired-bootstrap CI and the items that went from passed
to failed and back, on held-out results made by hand."""

from posttrain.config import parse_config
from posttrain.pipeline.evaluation import EvalResult
from posttrain.pipeline.run_outputs import run_summary


def result(passed: dict[str, bool]) -> EvalResult:
    per_item = {i: float(p) for i, p in passed.items()}
    return EvalResult(per_item=per_item, per_domain={}, overall=sum(per_item.values()) / len(per_item))


def test_per_domain_changes_count_the_items_that_fell_and_rose():
    config = parse_config({"domains": [{"name": "a", "source": "reasoning-gym:basic_arithmetic"}]}, "run.toml")
    before = result({"a/0": True, "a/1": True, "a/2": False, "a/3": False, "b/0": True})
    after = result({"a/0": False, "a/1": True, "a/2": True, "a/3": True, "b/0": False})
    domain_of = {"a/0": "a", "a/1": "a", "a/2": "a", "a/3": "a", "b/0": "b"}
    summary = run_summary(config, before, after, 1.0, False, domain_of)
    a, b = summary["per_domain_delta"]["a"], summary["per_domain_delta"]["b"]
    assert (a["n"], a["items_worse"], a["items_better"], a["delta"]) == (4, 1, 2, 0.25)
    assert (b["n"], b["items_worse"], b["items_better"], b["delta"]) == (1, 1, 0, -1.0)
    assert a["delta_ci95"][0] <= a["delta"] <= a["delta_ci95"][1]
