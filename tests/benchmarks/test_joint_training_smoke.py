"""The joint-training benchmark script end to end at its tiny size, and merging a report of
experiments run at different sizes."""

from __future__ import annotations

import json

from tests.benchmarks.scripts import load_script, run_script


def test_tiny_sequential_and_joint_merged_into_an_older_report(tmp_path):
    older = {
        "size": {"name": "small", "steps": 16, "heldout": 64, "seesaw_steps": 28},
        "curriculum": {"static": {"steps_to_target": 16}},
        "induced_seesaw": {"evals_to_alarm": 1},
        "wall_s": 10.0,
    }
    (tmp_path / "older.json").write_text(json.dumps(older))
    args = ["--size", "tiny", "--only", "sequential_joint", "--work", str(tmp_path / "runs")]
    report = run_script("joint_training", [*args, "--merge", str(tmp_path / "older.json")], tmp_path / "out.json")
    for arm in ("sequential", "joint"):
        domains = report[arm]["domains"]
        assert sorted(domains) == ["add2", "mul1", "sub", "three_sums"]
        for result in domains.values():
            lo, hi = result["delta_ci95"]
            assert lo <= result["delta"] <= hi
            assert result["heldout_items"] == 8
        assert isinstance(report[arm]["alarms"], list)
    assert report["curriculum"] == older["curriculum"] and report["induced_seesaw"] == older["induced_seesaw"]
    # each experiment keeps the size it ran at
    assert report["size"]["sequential_joint"]["name"] == "tiny"
    assert report["size"]["curriculum"]["name"] == "small"
    assert report["size"]["induced_seesaw"] == {"name": "small", "steps": 28, "heldout": 64}
    assert report["cpu"]["model_name"]


def test_sizes_of_a_report_without_names_per_experiment():
    bench = load_script("joint_training")
    assert bench._sizes_by_experiment({"size": {"sequential_joint": {"name": "full"}}}) == {
        "sequential_joint": {"name": "full"}
    }
    assert bench._sizes_by_experiment({"size": {"name": "small"}, "joint": {}}) == {
        "sequential_joint": {"name": "small"}
    }
