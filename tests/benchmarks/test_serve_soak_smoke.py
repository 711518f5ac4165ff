"""The serving soak, briefly: a real `posttrain serve` of the tiny model at twice its measured
capacity for 10 s with disconnects, oversized and malformed bodies, slow readers and wrong keys."""

from __future__ import annotations

import pytest

from tests.benchmarks.scripts import run_script


def test_ten_seconds_at_twice_capacity_give_no_5xx_and_leave_nothing_in_the_engine(tmp_path):
    args = ["--model", "tiny-llama", "--duration", "10", "--capacity-seconds", "3", "--warmup", "2"]
    report = run_script("serve_soak", [*args, "--rss-every", "1", "--max-tokens", "16"], tmp_path / "soak.json")
    assert report["capacity_rps"] > 0 and report["offered_rps"] == pytest.approx(2 * report["capacity_rps"], abs=0.01)
    assert report["responses_5xx_seen_by_clients"] == 0 and report["responses_5xx_counted_by_server"] == 0
    assert report["after_drain"] == {"engine_sequences": 0, "kv_blocks_in_use": 0, "open_requests": 0}
    answers = report["answers_by_kind"]
    assert answers["chat"].get("200") and answers["stream"].get("200") and answers["slow_reader"].get("200")
    assert set(answers["malformed"]) == {"400"} and set(answers["unauthorized"]) == {"401"}
    assert set(answers["oversized"]) <= {"400", "413"}
    assert report["server_refused_by_reason"]["body_too_large"] >= 1
    # one log line a refusal reason, not one a refusal
    assert report["server_refusal_log_lines"] <= len(report["server_refused_by_reason"])
    latency = report["latency_s"]
    assert latency["p50"] <= latency["p99"] and 0 < latency["stream_first_token_p50"] <= latency["p99"]
    assert report["rss_mb_after_warmup"] > 0 and report["rss_mb_end"] > 0
    assert report["cpu"]["model_name"]
