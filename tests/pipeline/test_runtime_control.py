"""Steering a running async job: `posttrain pipeline set` changes the domain weights and the
worker count; the run applies them at its next step; `posttrain pipeline status` shows it. A
finished run is one line for both: nothing runs to show, nothing would read a change."""

import json
import threading
import time

from typer.testing import CliRunner

from posttrain.cli import app
from posttrain.pipeline.driver import train


def test_weights_and_workers_change_while_the_run_goes(tmp_path, tiny_config):
    config = tiny_config(steps=14, checkpoint_every=100)
    config.write_text('mode = "async"\n' + config.read_text() + "\n[async]\nmax_staleness = 1\n")
    run_dir = tmp_path / "run"
    outcome = {}
    worker = threading.Thread(target=lambda: outcome.update(summary=train(config, run_dir)))
    worker.start()
    deadline = time.monotonic() + 120
    while True:
        assert time.monotonic() < deadline and worker.is_alive()
        try:
            if json.loads((run_dir / "dispatch.json").read_text())["policy_version"] >= 1:
                break
        except (FileNotFoundError, json.JSONDecodeError, KeyError):
            pass
        time.sleep(0.01)
    runner = CliRunner()
    bad = runner.invoke(app, ["pipeline", "set", str(run_dir), "--weight", "nope=2"])
    assert bad.exit_code == 2 and "no domain named nope" in bad.output
    done = runner.invoke(
        app, ["pipeline", "set", str(run_dir), "--weight", "add=1000", "--weight", "count=0.001", "--workers", "2"]
    )
    assert done.exit_code == 0, done.output
    worker.join(timeout=300)
    assert "summary" in outcome

    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    applied = next(r["step"] for r in records if r.get("control_revision") == 1)
    assert applied <= 10, "the change should land within a step or two"
    assert all(r["domain_weights"] == {"add": 1000.0, "count": 0.001} for r in records if r["step"] >= applied)
    assert all(r["dispatch/workers"] == 2 for r in records if r["step"] >= applied)
    # stream steps drawn after the change (beyond the eta + 1 already admitted) are all `add`
    later = [t for r in records for s, t in zip(r["stream_slots"], r["task_ids"]) if int(s.split(":")[0]) > applied + 1]
    assert later and all(t.startswith("add/") for t in later)
    earlier = [t for r in records for s, t in zip(r["stream_slots"], r["task_ids"]) if int(s.split(":")[0]) <= 2]
    assert any(t.startswith("count/") for t in earlier)  # steps 1-2, drawn before any change

    status = json.loads((run_dir / "dispatch.json").read_text())  # its last status, as the run ended
    assert status["executor"]["weights"] == {"add": 1000.0, "count": 0.001}


def test_a_finished_run_is_one_line_for_status_and_set(tmp_path, tiny_config):
    config = tiny_config(steps=2, checkpoint_every=100)
    config.write_text('mode = "async"\n' + config.read_text() + "\n[async]\nmax_staleness = 1\n")
    run_dir = tmp_path / "run"
    train(config, run_dir)
    assert (run_dir / "dispatch.json").is_file() and (run_dir / "summary.json").is_file()
    runner = CliRunner()
    shown = runner.invoke(app, ["pipeline", "status", str(run_dir)])
    assert shown.exit_code == 0, shown.output
    assert shown.output.strip() == f"{run_dir}: the run is finished (its results: summary.json); no dispatcher runs now"
    refused = runner.invoke(app, ["pipeline", "set", str(run_dir), "--workers", "2"])
    assert refused.exit_code == 2
    assert refused.output.strip() == (
        f"error: {run_dir}: the run is finished (its results: summary.json); nothing would read a change"
    )
    assert not (run_dir / "control.json").exists()
