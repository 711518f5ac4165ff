"""The chaos benchmark on a tiny model: a minute of random SIGKILLs (workers, sandboxes, the
trainer) plus one trainer kill forced after the first step, then the run's invariants. Only the
invariants are asserted: how many faults fire depends on the machine's speed."""

from __future__ import annotations

import json

import pytest

from tests.benchmarks.scripts import load_script, run_script
from tests.sandbox.conftest import BWRAP_MISSING


def test_the_fault_interval_is_checked():
    bench = load_script("chaos")
    assert bench.parse_args(["--fault-interval", "10,20"]).fault_interval == (10.0, 20.0)
    with pytest.raises(SystemExit):
        bench.parse_args(["--fault-interval", "20,10"])


@pytest.mark.slow
@pytest.mark.skipif(bool(BWRAP_MISSING), reason=str(BWRAP_MISSING))
def test_tiny_chaos_run_keeps_every_invariant(tmp_path):
    args = ["--tiny", "--duration", "60", "--fault-interval", "10,20", "--force-trainer-kill-after", "1"]
    report = run_script("chaos", [*args, "--baseline", "--workdir", str(tmp_path / "work")], tmp_path / "chaos.json")
    assert report["ok"] is True and all(report["invariants"].values()), report["invariants"]
    checks = report["checks"]
    assert checks["steps_once_in_order"] and checks["slots_once"] and checks["same_tasks_as_baseline"]
    assert checks["episodes_once"] and checks["episodes_stored"] == report["steps"] * 2 * report["group_size"]
    assert checks["masked_counted"] and checks["checkpoints_load"] and not checks["partial_checkpoints_left"]
    forced = [e for e in report["faults"]["events"] if e.get("forced")]
    assert len(forced) == 1 and forced[0]["kind"] == "trainer" and "pid" in forced[0]
    assert report["trainer_sessions"] >= 3  # the first, the resume after the forced kill, the finishing one
    assert "engine_replica" in report["faults"]["not_applicable"]
    assert report["heldout"]["n"] == 4 and report["cpu"]["model_name"]
    run = tmp_path / "work" / "chaos"
    summary = json.loads((run / "summary.json").read_text())
    assert summary["resumed"] is True and summary["steps"] == report["steps"]
