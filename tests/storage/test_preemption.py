"""SIGTERM preemption of a real `posttrain train` process publishing to a real S3 server (moto,
over HTTP, through s3fs): the run saves its in-flight state within the grace time, publishes it
and exits with code 75; a fresh directory fed only from the bucket resumes it, and the trained
task stream equals an uninterrupted run's.

What is equal, and why: the stream's tasks are drawn per step from the seed (the mixture here
has fixed weights), one rollout job per stream slot, and a resume restores the finished groups
and re-queues the slots that were in flight. So the (stream slot, task) pairs trained are the
uninterrupted run's, each exactly once, in both modes; in sync mode each step trains its own
slots, so the pairs are equal step by step as well. Async mode trains the oldest fresh groups,
whose timing decides which step takes a slot: there the multiset is equal, not the step of each.
"""

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from posttrain.pipeline.run_at_url import working_copy
from posttrain.pipeline.shutdown_notice import EXIT_GRACE_RAN_OUT, EXIT_PREEMPTED
from posttrain.storage.artifact_store import MANIFEST, ArtifactStore

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "posttrain.cli"]
STEPS = 6


def cli(*args: str) -> list[str]:
    return [*CLI, *args]


def env(cache: Path | None = None) -> dict[str, str]:
    """The environment of a run; `cache`: the machine's $POSTTRAIN_CACHE (--out URL's working copy)."""
    out = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "COLUMNS": "200"}
    out.pop("POSTTRAIN_FAULTS", None)
    if cache is not None:
        out["POSTTRAIN_CACHE"] = str(cache)
    return out


def write_config(tiny_config, mode: str, url: str | None, grace_s: float) -> Path:
    """sync checkpoints every 2 steps, so a notice after step 2 finds its checkpoint there (a
    newer pipeline state joins it); async every 4, so the notice writes a whole checkpoint."""
    path = tiny_config(steps=STEPS, checkpoint_every=2 if mode == "sync" else 4)
    text = f'mode = "{mode}"\n' + path.read_text().replace(
        "keep_checkpoints = 2", f"keep_checkpoints = 2\npreemption_grace_s = {grace_s}"
    )
    if mode == "async":
        text += "\n[async]\nmax_staleness = 1\n"
    if url:
        text += f'\n[storage]\nurl = "{url}"\n'
    target = path.with_name(f"{mode}-{'s3' if url else 'local'}-{grace_s}.toml")
    target.write_text(text)
    return target


def records(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines() if line.strip()]


def slot_tasks(run_dir: Path) -> Counter:
    return Counter((s, t) for r in records(run_dir) for s, t in zip(r["stream_slots"], r["task_ids"]))


def sigterm_after(
    config: Path, out: Path, steps_done: int, out_arg: str | None = None, cache: Path | None = None
) -> tuple[int, float, str]:
    """Start a run in `out` (given as `out_arg`, a URL whose working copy `out` is, if set), send
    SIGTERM once `steps_done` steps are recorded -> (exit code, seconds from the signal to the
    exit, stderr)."""
    process = subprocess.Popen(
        cli("train", str(config), "--out", out_arg or str(out)),
        cwd=ROOT,
        env=env(cache),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    metrics, deadline = out / "metrics.jsonl", time.monotonic() + 300
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()[1][-3000:]
        if metrics.is_file() and len(metrics.read_text().splitlines()) >= steps_done:
            break
        time.sleep(0.05)
    sent = time.monotonic()
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=120)
    return process.returncode, time.monotonic() - sent, err


def resume_from(url: str, out: Path | None = None, cache: Path | None = None) -> subprocess.CompletedProcess:
    """`--resume --out OUT --from URL`, or without `out`: `--resume --out URL` on a machine whose
    cache is `cache`."""
    args = ["--out", str(out), "--from", url] if out is not None else ["--out", url]
    return subprocess.run(
        cli("train", "--resume", *args),
        cwd=ROOT,
        env=env(cache),
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
@pytest.mark.parametrize(("mode", "where"), [("sync", "[storage] url"), ("async", "--out URL")])
def test_sigterm_publishes_in_flight_state_and_a_fresh_machine_resumes_losslessly(
    mode, where, tmp_path, tiny_config, s3_bucket, machine_cache, monkeypatch
):
    """sync: published through [storage] url, resumed with --resume --out NEW_DIR --from URL;
    async: the run lives at --out s3://..., resumed with --resume --out s3://... on another
    machine (another $POSTTRAIN_CACHE)."""
    url, grace = f"s3://{s3_bucket}/runs/spot", 20.0
    by_url = where == "--out URL"
    straight = tmp_path / "straight"
    done = subprocess.run(
        cli("train", str(write_config(tiny_config, mode, None, grace)), "--out", str(straight)),
        cwd=ROOT,
        env=env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]

    machine_a, machine_b = machine_cache("machine-a"), machine_cache("machine-b")
    if by_url:
        monkeypatch.setenv("POSTTRAIN_CACHE", str(machine_a))
        spot, fresh = working_copy(url), None
        monkeypatch.setenv("POSTTRAIN_CACHE", str(machine_b))
        elsewhere = working_copy(url)
        config = write_config(tiny_config, mode, None, grace)
    else:
        spot, fresh = tmp_path / "spot", tmp_path / "elsewhere"
        elsewhere = fresh
        config = write_config(tiny_config, mode, url, grace)
    code, took, err = sigterm_after(config, spot, 2, out_arg=url if by_url else None, cache=machine_a)
    assert code == EXIT_PREEMPTED, err[-3000:]
    assert took < grace, took
    line = next(x for x in err.splitlines() if x.startswith("preempted: "))
    print(f"SIGTERM to exit: {took:.2f} s; {line}")  # shown by pytest -rP
    again = f"--resume --out {url}" if by_url else f"--resume --out NEW_DIR --from {url}"
    assert line.endswith(f"continue with: posttrain train {again}"), line
    step = int(line.split("the state at step ")[1].split()[0])
    assert 2 <= step < STEPS
    buffered = int(line.split("(")[1].split()[0])
    assert buffered > 0, line  # finished groups not yet trained travel with the state
    store = ArtifactStore(url)
    assert store.published_steps()[-1] == step
    manifest = json.loads(store.fs.cat_file(f"{store.root}/checkpoints/step-{step}/{MANIFEST}"))
    assert any(name.startswith("pipeline_state") for name in manifest)

    resumed = resume_from(url, fresh, cache=machine_b)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"fetched {url} into {elsewhere}: its checkpoint at step {step}" in resumed.stderr
    assert f"resuming: from the checkpoint at step {step} of {STEPS}" in resumed.stderr
    got = records(elsewhere)
    assert [r["step"] for r in got] == list(range(1, STEPS + 1))
    first = got[step]  # the first step of the resumed session
    assert first["restored_buffered"] >= buffered
    assert slot_tasks(elsewhere) == slot_tasks(straight)
    assert set(slot_tasks(elsewhere).values()) == {1}
    if mode == "sync":
        assert [r["task_ids"] for r in got] == [r["task_ids"] for r in records(straight)]
    assert json.loads(store.fs.cat_file(f"{store.root}/summary.json"))["resumed"] is True


@pytest.mark.slow
def test_a_grace_too_short_exits_143_and_leaves_only_whole_checkpoints(tmp_path, tiny_config, s3_bucket):
    """The watchdog ends the run when the grace runs out, whatever it is doing; what the bucket
    holds is still a run a fresh machine resumes, every stream slot trained exactly once. Here
    the notice comes before the first checkpoint (every 4 steps): the bucket has the run's files,
    and the resume starts it over."""
    url = f"s3://{s3_bucket}/runs/short"
    code, took, err = sigterm_after(write_config(tiny_config, "async", url, 0.05), tmp_path / "spot", 3)
    assert code == EXIT_GRACE_RAN_OUT, err[-3000:]
    assert "preemption grace (0.05 s) ran out" in err
    assert took < 5, took
    fresh = tmp_path / "elsewhere"
    resumed = resume_from(url, fresh)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    got = records(fresh)
    assert [r["step"] for r in got] == list(range(1, STEPS + 1))
    trained = slot_tasks(fresh)
    assert len(trained) == STEPS * 3 and set(trained.values()) == {1}
