"""An async run with process workers keeps going through faults: a worker killed from outside,
a worker that dies mid-episode, an engine step that raises. Nothing is lost: every stream slot
is trained exactly once, and the metrics count the deaths and the retries."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

CLI = [sys.executable, "-m", "posttrain.cli"]


@pytest.mark.slow
def test_worker_deaths_and_engine_errors_do_not_stop_the_run(tmp_path, tiny_config):
    config = tiny_config(steps=8, checkpoint_every=4)
    config.write_text(
        'mode = "async"\n'
        + config.read_text().replace("max_new_tokens = 4", "max_new_tokens = 16")
        + "\n[async]\nmax_staleness = 1\n"
        + '[dispatch]\nworker_kind = "process"\nworkers = 3\nbackoff_s = 0.05\n'
    )
    run_dir = tmp_path / "run"
    env = {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "POSTTRAIN_FAULTS": "die:rollout_job@2,raise:engine_step@60",
        "POSTTRAIN_FAULTS_ONCE": str(tmp_path / "faults-fired"),
    }
    proc = subprocess.Popen(
        CLI + ["train", str(config), "--out", str(run_dir)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    victim = None
    deadline = time.monotonic() + 300
    while victim is None:  # kill a worker process that is running a rollout
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline
        try:
            status = json.loads((run_dir / "dispatch.json").read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            time.sleep(0.01)
            continue
        busy = [w for w in status["executor"]["workers"] if w["job"] and w["pid"]]
        if busy and status["policy_version"] >= 1:
            victim = busy[0]["pid"]
            os.kill(victim, signal.SIGKILL)
        time.sleep(0.01)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err

    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == list(range(1, 9))
    slots = [s for r in records for s in r["stream_slots"]]
    assert sorted(slots) == sorted(f"{step}:{i}" for step in range(1, 9) for i in range(3))  # none lost
    last = records[-1]
    assert last["dispatch/worker_deaths"] >= 2  # the one killed from outside, the one that died mid-job
    assert last["dispatch/retries"] >= 2  # that job, and the calls the failing engine step took down
    assert sorted(os.listdir(tmp_path / "faults-fired")) == ["die-rollout_job-2", "raise-engine_step-60"]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["pipeline"]["dispatch"]["failed"] == 0 and summary["pipeline"]["worker_kind"] == "process"
    with pytest.raises(ProcessLookupError):
        os.kill(victim, 0)
