"""The scene verifier benchmark, end to end on a few tasks."""

from tests.benchmarks.scripts import run_script


def test_tiny_end_to_end(tmp_path):
    report = run_script("scene_verifier", ["--tasks", "3"], tmp_path / "result.json")
    assert set(report["difficulties"]) == {"1", "2", "3", "6"}
    assert all(d["answers_per_s"] > 0 and d["constraints"] > 0 for d in report["difficulties"].values())
    assert all(not c["valid"] and c["reason"] for c in report["crafted"].values())
    assert report["cpu"]["model_name"]
