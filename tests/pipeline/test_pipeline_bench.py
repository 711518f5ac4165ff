"""`posttrain pipeline bench` end to end on the tiny model (the figures in docs/BENCHMARKS.md come
from the same command on SmolLM2)."""

import json
import os
import subprocess
import sys

import pytest

from posttrain.pipeline.bench import environment_seconds


def test_environment_time_is_heavy_tailed_and_fixed_per_slot():
    values = sorted(environment_seconds(f"{s}:{i}", 2.0, 1.0) for s in range(1, 101) for i in range(4))
    assert environment_seconds("3:1", 2.0, 1.0) == environment_seconds("3:1", 2.0, 1.0)
    assert values[len(values) // 2] == pytest.approx(2.0, rel=0.2)  # the median
    assert values[int(0.9 * len(values))] > 6.0 and values[-1] <= 30.0  # a tail, capped
    assert environment_seconds("3:1", 0.0, 1.0) == 0.0


def test_bench_runs_both_modes_and_reports_the_comparison(tmp_path):
    out = tmp_path / "bench.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "posttrain.cli",
            "pipeline",
            "bench",
            "--model",
            "tiny-llama",
            "--steps",
            "4",
            "--heldout",
            "2",
            "--prompts",
            "3",
            "--group-size",
            "2",
            "--max-new-tokens",
            "8",
            "--env-median-s",
            "0.2",
            "--env-sigma",
            "1.0",
            "--runs",
            str(tmp_path / "runs"),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    assert json.loads(done.stdout) == report
    for mode in ("sync", "async"):
        figures = report[mode]
        assert figures["steps"] == 4 and figures["steps_per_hour"] > 0
        assert 0.0 <= figures["trainer_idle_frac"] <= 1.0 and 0.0 <= figures["rollout_idle_frac"] <= 1.0
        assert 0.0 <= figures["reward_after"] <= 1.0 and figures["reply_tokens"]["n"] == 4 * 3 * 2
    assert report["sync"]["staleness_max"] == 0 and report["async"]["staleness_max"] <= 1 == report["max_gap"]
    assert abs(report["speedup"] - report["async"]["steps_per_hour"] / report["sync"]["steps_per_hour"]) < 1e-9
    assert report["reward_after_async_minus_sync"]["n_heldout"] == 4
    env = report["workload"]["environment_time"]
    assert env["groups"] == 4 * 3 and 0 < env["p50_s"] <= env["p90_s"] <= env["max_s"] <= 30
    # a synchronous step waits for its slowest group's environment time at least
    assert report["sync"]["train_loop_s"] >= 4 * env["slowest_group_per_step_mean_s"]
    assert (tmp_path / "runs" / "sync" / "summary.json").is_file() and (
        tmp_path / "runs" / "async" / "summary.json"
    ).is_file()
