"""benchmarks/longctx_score.py: its scoring on its own, and one short run on the real model."""

from __future__ import annotations

import pytest

from tests.benchmarks.scripts import load_script, run_script

longctx_score = load_script("longctx_score")


def test_the_wilson_interval_is_not_empty_at_zero_passes():
    low, high = longctx_score.wilson_interval(0, 20)
    assert low == 0.0 and 0.1 < high < 0.2
    low, high = longctx_score.wilson_interval(20, 20)
    assert 0.8 < low < 0.9 and high == 1.0


@pytest.mark.parametrize(
    "kind, expected, reply, share",
    [
        ("retrieval", "72866, 10825, 30213", "lemon is 72866.\nglacier is 85249.\nthe last is 30213", 2 / 3),
        ("retrieval", "72866, 10825, 30213", "1728660", 0.0),  # a value inside a longer number is not found
        ("multihop", "21685", "V1 = 1000\nThe answer is 21685.", 1.0),
        ("aggregation", "garden, ember, valley", "Garden and EMBER", 2 / 3),
        ("consistency", "not present", "Order 00053: Gray ordered 72 pulleys", 0.0),
    ],
)
def test_contained_share_counts_each_expected_value_once(kind, expected, reply, share):
    assert longctx_score.contained_share(kind, expected, reply) == pytest.approx(share)


def test_a_short_run_scores_every_task_and_measures_memory(tmp_path):
    args = ["--kinds", "retrieval,multihop", "--lengths", "0.5k", "--count", "1", "--reply-tokens", "16"]
    report = run_script("longctx_score", args + ["--workdir", str(tmp_path / "runs")], tmp_path / "out.json")
    length = report["per_length"]["0.5k"]
    assert length["n"] == 2 and length["context_overflow"] == 0
    assert 0.0 <= length["strict"] <= length["strict_ci95"][1] <= 1.0
    assert length["peak_rss_mb"] > 200 and length["tokens_per_s"] > 0
    assert sorted(report["per_kind_and_length"]) == ["multihop", "retrieval"]
    assert {r["task_id"] for r in report["rows"]} == {"longctx-retrieval-500-0", "longctx-multihop-500-0"}
    assert report["cpu"]["cores"] >= 1
