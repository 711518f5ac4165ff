"""The hundred-domain benchmark end to end at --tiny on a small config of all three kinds of
domain (a reasoning-gym pattern, a terminal family, the scene domain): the gate's verdicts
read, a dropped domain left out of every arm, and per arm the per-domain changes with their
CIs, the falls kept after FDR control, step time and peak memory against the 4-domain run."""

from __future__ import annotations

import json

from tests.benchmarks.scripts import run_script

CONFIG = """
[model]
name = "smollm2-135m"

[[domains]]
name = "rg"
source = "reasoning-gym:basic_arithmetic"
heldout = 8

[[domains]]
name = "rg2"
source = "reasoning-gym:coin_*"
heldout = 8

[[domains]]
name = "term"
source = "terminal-gen:files-dirs"
kind = "terminal"
difficulty = [1]
heldout = 4

[[domains]]
name = "scene"
source = "scene:1"
heldout = 4

[mixture]
policy = "learnability"

[monitor]
every = 10
items = 8
domains_per_check = 2
fdr = 0.1

[agent]
tools = ["bash", "finish"]
max_steps = 3

[train]
steps = 100
"""


def test_tiny_run_of_three_kinds_of_domain(tmp_path):
    (tmp_path / "hundred.toml").write_text(CONFIG)
    verdicts = [
        {"name": "rg", "verdict": "ok", "reason": ""},
        {"name": "rg2-coin_flip", "verdict": "exploitable", "reason": "accepts the constant 0"},
    ]
    (tmp_path / "gate.json").write_text(json.dumps({"domains": verdicts}))
    args = ["--tiny", "--config", str(tmp_path / "hundred.toml"), "--gate-report", str(tmp_path / "gate.json")]
    report = run_script("hundred_domains", [*args, "--work", str(tmp_path / "runs")], tmp_path / "out.json")
    assert report["gate"]["dropped"] == ["rg2-coin_flip"] and report["size"]["name"] == "tiny"
    assert report["size"]["policy"] == "learnability" and report["size"]["steps"] == 4
    for name in ("mixture", "uniform"):
        arm = report["arms"][name]
        assert sorted(arm["domains"]) == ["rg", "scene", "term"]
        for result in arm["domains"].values():
            low, high = result["delta_ci95"]
            assert low <= result["delta"] <= high and 0.0 <= result["p_fall"] <= 1.0
        assert arm["domains"]["rg"]["gate"] == "ok" and arm["domains"]["rg"]["items"] == 2
        assert set(arm["ci_below_zero_after_fdr"]) <= set(arm["falls_fdr"]) | set(arm["ci_below_zero"])
        assert arm["step_s_median"] > 0 and arm["peak_rss_mb"] > 0 and arm["monitor_cost"]["checks"] == 2
    assert sorted(report["arms"]["four"]["domains"]) == ["add2", "mul1", "sub", "three_sums"]
    assert report["hundred_vs_four"]["step_s_ratio"] > 0 and report["hundred_vs_four"]["peak_rss_ratio"] > 0
    assert report["cpu"]["model_name"]
