"""The quarantine list and the gate in front of training and evaluation."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from posttrain.errors import PosttrainError
from posttrain.quality.gate import gate
from posttrain.quality.quarantine import read_quarantine, write_quarantine

CORPUS = Path(__file__).parent / "corpus"
SUITE = Path(__file__).parents[2] / "tasks" / "terminal"


def test_quarantine_round_trip_and_errors(tmp_path):
    path = tmp_path / "quarantine.txt"
    write_quarantine(path, [("a", "flaky", "varies\nacross runs"), ("b", "exploitable", "probe:x")])
    assert read_quarantine(path) == {"a": "flaky: varies across runs", "b": "exploitable: probe:x"}
    (tmp_path / "hand.txt").write_text("# a comment\n\nc   written by hand\n")
    assert read_quarantine(tmp_path / "hand.txt") == {"c": "written by hand"}
    with pytest.raises(PosttrainError, match="missing.txt: quarantine file not found"):
        read_quarantine(tmp_path / "missing.txt")


def test_gate_skips_quarantined_tasks_and_says_why(tmp_path):
    from posttrain.tasks.harbor import load_harbor_suite

    tasks = load_harbor_suite(SUITE, names=["hello-file", "count-lines"])
    path = tmp_path / "quarantine.txt"
    write_quarantine(path, [("hello-file", "flaky", "test reason")])
    lines: list[str] = []
    kept = gate(tasks, path, log=lines.append)
    assert [t.id for t in kept] == ["count-lines"]
    assert "skipping 1 of 2" in lines[0] and "hello-file: flaky: test reason" in lines[1]


def test_training_config_quarantine_removes_tasks_from_terminal_domains(tmp_path):
    from posttrain.config import parse_config
    from posttrain.pipeline.build import build_mixture

    write_quarantine(tmp_path / "q.txt", [("hello-file", "exploitable", "probe:reward_file")])
    config = parse_config(
        {
            "quarantine": "q.txt",
            "domains": [
                {
                    "name": "term",
                    "kind": "terminal",
                    "source": f"harbor:{SUITE}",
                    "names": ["hello-file", "count-lines"],
                    "heldout": 0,
                }
            ],
        }
    )
    lines: list[str] = []
    mixture = build_mixture(config, tmp_path, log=lines.append)
    assert [t.id for t in mixture.domains["term"].source.tasks] == ["count-lines"]
    assert any("hello-file" in line for line in lines)
    write_quarantine(tmp_path / "q.txt", [("hello-file", "x", "y"), ("count-lines", "x", "y")])
    with pytest.raises(PosttrainError, match="every task is quarantined"):
        build_mixture(config, tmp_path, log=lines.append)


@pytest.mark.timeout(300)
def test_quality_gate_true_inspects_before_training(tmp_path):
    from posttrain.config import parse_config
    from posttrain.pipeline.build import build_mixture

    config = parse_config(
        {
            "quality_gate": True,
            "domains": [
                {
                    "name": "term",
                    "kind": "terminal",
                    "source": f"harbor:{CORPUS}",
                    "heldout": 0,
                    "names": ["ok-sum-bash", "broken-always-passes", "exploit-reward-file-stale"],
                }
            ],
        }
    )
    mixture = build_mixture(config, tmp_path, quality_dir=tmp_path / "quality", log=lambda line: None)
    assert [t.id for t in mixture.domains["term"].source.tasks] == ["ok-sum-bash"]
    report = json.loads((tmp_path / "quality" / "term" / "report.json").read_text())
    assert {t["id"]: t["verdict"] for t in report["tasks"]} == {
        "ok-sum-bash": "ok",
        "broken-always-passes": "broken_verifier",
        "exploit-reward-file-stale": "exploitable",
    }


@pytest.mark.timeout(300)
def test_eval_with_quarantine_skips_and_logs(tmp_path):
    (tmp_path / "q.txt").write_text("hello-file\tbroken_verifier: planted for this test\n")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "posttrain.cli",
            "eval",
            "--tasks",
            str(SUITE),
            "--names",
            "hello-file,count-lines",
            "--agent",
            "oracle",
            "--out",
            str(tmp_path / "run"),
            "--quarantine",
            str(tmp_path / "q.txt"),
        ],
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    logged = result.stdout + result.stderr
    assert "skipping 1 of 2" in logged and "planted for this test" in logged
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert list(summary["tasks"]) == ["count-lines"]
