"""`posttrain engine bench` end to end on the tiny model: the JSON report's shape and sanity."""

import json
import subprocess
import sys

CLI = [sys.executable, "-m", "posttrain.cli", "engine", "bench"]


def test_bench_reports_every_workload_and_backend(tmp_path):
    out = tmp_path / "bench.json"
    result = subprocess.run(
        CLI
        + [
            "--out",
            str(out),
            "--model",
            "tiny-llama",
            "--prompts",
            "2",
            "--n",
            "2",
            "--max-tokens",
            "4",
            "--turns",
            "2",
            "--backends",
            "hf,builtin",
        ],
        capture_output=True,
        text=True,
        timeout=600,  # a hang guard, not a speed test
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert json.loads(out.read_text()) == report

    for name in ("group", "multiturn"):
        workload = report["workloads"][name]
        for backend in ("hf", "builtin"):
            row = workload[backend]
            assert row["tok_s"] > 0 and row["wall_s"] > 0 and row["output_tokens"] > 0
            assert row["tok_s"] == row["output_tokens"] / row["wall_s"]
        assert 0 < workload["builtin"]["prefix_hit_rate"] <= 1  # n samples share a prompt; turns share history
        assert workload["vllm"] is None
        assert workload["ratios"]["builtin/hf"] > 0 and workload["ratios"]["builtin/vllm"] is None
    assert report["workloads"]["group"]["hf"]["output_tokens"] <= 2 * 2 * 4
    assert "vllm" in report["unavailable"]
    assert report["matmul_peak_flops"] > 0
    assert 0 < report["builtin_flops_fraction"] < 1
    assert "loading tiny-llama" in result.stderr  # progress on stderr, JSON alone on stdout


def test_bench_rejects_an_unknown_backend():
    result = subprocess.run(
        CLI + ["--model", "tiny-llama", "--backends", "hf,tgi"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert "--backends 'hf,tgi': choose from hf, builtin, vllm" in result.stderr
