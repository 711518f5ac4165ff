"""The prefill attention A/B script: one short run on the real model."""

from __future__ import annotations

import pytest
import torch

from posttrain.engine.builtin import fast_attention
from tests.benchmarks.scripts import run_script


def test_short_run_reports_both_arms_and_equal_bits(tmp_path):
    if fast_attention.agrees(3, 3, 64, torch.float32) is not None:
        pytest.skip("no native kernel here")
    report = run_script("prefill_attention_ab", ["--lengths", "24", "60", "--repeats", "1"], tmp_path / "r.json")
    assert set(report["cells"]) == {"24", "60"}
    for cell in report["cells"].values():
        assert cell["native_ms"] > 0 and cell["gemm_ms"] > 0
        assert cell["speedup"] == pytest.approx(cell["gemm_ms"] / cell["native_ms"], rel=0.01)
    assert report["same_tokens_and_logprobs"] is True
    assert report["cpu"]["model_name"]
