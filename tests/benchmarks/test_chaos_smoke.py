"""The chaos benchmark on a tiny model: a minute of random SIGKILLs (workers, sandboxes, the
trainer) plus one trainer kill forced after the first step, then the run's invariants. Only the
invariants are asserted: how many faults fire depends on the machine's speed."""

from __future__ import annotations

import json

import pytest

from tests.benchmarks.scripts import load_script, run_script
from tests.sandbox.conftest import BWRAP_MISSING


def test_the_fault_interval_and_menu_are_checked():
    bench = load_script("chaos")
    assert bench.parse_args(["--fault-interval", "10,20"]).fault_interval == (10.0, 20.0)
    with pytest.raises(SystemExit):
        bench.parse_args(["--fault-interval", "20,10"])
    assert bench.parse_args([]).faults == ("worker", "sandbox", "engine", "trainer")
    assert bench.parse_args(["--faults", "engine,sandbox"]).faults == ("engine", "sandbox")
    with pytest.raises(SystemExit):
        bench.parse_args(["--faults", "engine,replica"])


def step(n: int, slots: list[str]) -> dict:
    return {"step": n, "stream_slots": slots, "task_ids": [f"task-{s}" for s in slots]}


def test_slots_are_checked_against_the_staleness_bound():
    bench = load_script("chaos")
    # async, eta 1: step 1 trained the first groups to finish (one of step 2's); 6:x still in flight
    run = [step(1, ["1:0", "2:0"]), step(2, ["1:1", "2:1"]), step(3, ["3:0", "3:1"]), step(4, ["4:0", "5:0"])]
    run += [step(5, ["4:1", "5:1"]), step(6, ["7:0", "7:1"])]
    assert bench.check_steps_and_slots(run, 2, 1, None)["slots_once"]
    lost = bench.check_steps_and_slots(run[:4] + [step(5, ["4:1", "6:0"]), run[5]], 2, 1, None)
    assert not lost["slots_once"] and lost["slots_missing"] == ["5:1"]
    twice = bench.check_steps_and_slots(run[:5] + [step(6, ["5:1", "7:1"])], 2, 1, None)
    assert twice["slots_repeated"] == ["5:1"] and not twice["slots_once"]
    ahead = bench.check_steps_and_slots(run[:5] + [step(6, ["8:0", "7:1"])], 2, 1, None)
    assert ahead["slots_not_yet_admitted"] == ["8:0"] and not ahead["slots_once"]
    other = [step(1, ["1:1", "2:1"]), step(2, ["1:0", "2:0"])]
    assert bench.check_steps_and_slots(run, 2, 1, other)["same_tasks_as_baseline"]
    other[0]["task_ids"][0] = "another"
    assert not bench.check_steps_and_slots(run, 2, 1, other)["same_tasks_as_baseline"]


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
    assert set(report["faults"]["fired"]) == {"worker", "sandbox", "engine", "trainer"}
    assert report["heldout"]["n"] == 4 and report["cpu"]["model_name"]
    run = tmp_path / "work" / "chaos"
    summary = json.loads((run / "summary.json").read_text())
    assert summary["resumed"] is True and summary["steps"] == report["steps"]
