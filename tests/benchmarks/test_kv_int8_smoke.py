"""benchmarks/kv_int8.py: one short --tiny run on the real engine."""

from __future__ import annotations

from tests.benchmarks.scripts import run_script


def test_tiny_run_reports_bytes_fit_speed_and_agreement(tmp_path):
    args = ["--tiny", "--contexts", "64", "128", "--decode-tokens", "4", "--repeats", "1", "--agent-prompts", "1"]
    args += ["--longctx", "longctx:retrieval:1k:1", "--max-tokens", "4"]
    report = run_script("kv_int8", args, tmp_path / "r.json")
    assert report["model"] == "tiny-llama" and report["cpu"]["model_name"]
    assert report["bytes_per_token"] == {"fp32": 512, "int8": 160, "ratio": 160 / 512}
    assert all(cell["ratio"] >= 1.9 for cell in report["fit"]["by_context"].values())
    for cell in report["decode"].values():
        assert cell["fp32"]["tokens"] == cell["int8"]["tokens"] == 3  # the first token is the prefill's
        assert cell["int8_over_fp32"] > 0
    for prompts in report["agreement"].values():
        for arm in ("int8", "int8_no_rotation"):
            assert prompts[arm]["positions"] == 4 * prompts[arm]["prompts"]
            assert prompts[arm]["greedy_agreement"] >= 0.75 and prompts[arm]["kl_mean"] < 1e-4
