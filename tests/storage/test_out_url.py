"""`posttrain train --out s3://bucket/runs/NAME` against a real S3 server (moto over HTTP): the
run trains in a working copy under $POSTTRAIN_CACHE/runs/ and publishes to the URL; stopped by
an error after its first checkpoint, it resumes with `--resume --out URL` on a machine whose
cache has never seen it. Bad combinations are one error line naming the flag or key."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from posttrain.cli import app
from posttrain.pipeline.run_at_url import working_copy
from posttrain.storage.artifact_store import ArtifactStore

ROOT = Path(__file__).resolve().parents[2]


def train(args: list[str], cache: Path, fault: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "POSTTRAIN_CACHE": str(cache)}
    env.pop("POSTTRAIN_FAULTS", None)
    if fault:
        env["POSTTRAIN_FAULTS"] = fault
    return subprocess.run(
        [sys.executable, "-m", "posttrain.cli", "train", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
def test_a_run_that_lives_at_a_url_resumes_on_a_machine_that_never_saw_it(
    tiny_config, s3_bucket, machine_cache, monkeypatch
):
    url = f"s3://{s3_bucket}/runs/tiny"
    config = tiny_config(steps=4, checkpoint_every=2)
    machine_a, machine_b = machine_cache("a"), machine_cache("b")
    first = train([str(config), "--out", url], machine_a, fault="raise:train_step@3")
    assert first.returncode != 0 and "FaultInjected" in first.stderr, first.stderr[-3000:]
    monkeypatch.setenv("POSTTRAIN_CACHE", str(machine_a))
    copy_a = working_copy(url)
    assert f"working copy of {url}: {copy_a}" in first.stderr
    assert (copy_a / "checkpoints" / "step-2").is_dir() and str(copy_a).startswith(str(machine_a / "runs"))
    store = ArtifactStore(url)
    assert store.published_steps() == [2] and store.exists("metrics.jsonl")
    assert f'url = "{url}"' in store.fs.cat_file(f"{store.root}/config.toml").decode()

    # a new run on a URL that holds one is refused (before anything loads)
    again = CliRunner().invoke(app, ["train", str(config), "--out", url])
    assert again.exit_code == 2 and "a run is already there; continue it with --resume" in again.output

    done = train(["--resume", "--out", url], machine_b)
    assert done.returncode == 0, done.stderr[-3000:]
    monkeypatch.setenv("POSTTRAIN_CACHE", str(machine_b))
    copy_b = working_copy(url)
    assert f"fetched {url} into {copy_b}: its checkpoint at step 2" in done.stderr
    assert "resuming: from the checkpoint at step 2 of 4" in done.stderr
    records = [json.loads(line) for line in (copy_b / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [1, 2, 3, 4]
    assert store.published_steps() == [2, 4]
    summary = json.loads(store.fs.cat_file(f"{store.root}/summary.json"))
    assert summary["steps"] == 4 and summary["resumed"] is True


def test_out_url_mistakes_are_one_error_line(tiny_config, s3_bucket, machine_cache, monkeypatch):
    monkeypatch.setenv("POSTTRAIN_CACHE", str(machine_cache("cache")))
    url = f"s3://{s3_bucket}/runs/none"
    config = tiny_config(steps=2)

    nothing = CliRunner().invoke(app, ["train", "--resume", "--out", url])
    assert nothing.exit_code == 2
    assert f"--out {url}: no run there (no config.toml) — nothing to resume" in nothing.output

    both = CliRunner().invoke(app, ["train", "--resume", "--out", url, "--from", url])
    assert both.exit_code == 2 and "--from is for a local --out" in both.output

    other = config.with_name("other.toml")
    other.write_text(config.read_text() + f'\n[storage]\nurl = "s3://{s3_bucket}/elsewhere"\n')
    clash = CliRunner().invoke(app, ["train", str(other), "--out", url, "--check"])
    assert clash.exit_code == 2
    assert "[storage] url = " in clash.output and f"but --out is {url}; give only one" in clash.output

    plan = CliRunner().invoke(app, ["train", str(config), "--out", url, "--check"])
    assert plan.exit_code == 0, plan.output
    assert not ArtifactStore(url).exists("config.toml")  # --check writes nothing, there either


def test_an_eval_at_a_url_is_published_and_resumes_from_it_elsewhere(s3_bucket, machine_cache, monkeypatch):
    """`posttrain eval --out s3://...`: the results are published when the command ends; the
    same command on another machine fetches them and has nothing left to run."""
    url = f"s3://{s3_bucket}/evals/longctx"
    args = ["eval", "--tasks", "longctx:all:1k:1", "--agent", "oracle", "--out", url]
    monkeypatch.setenv("POSTTRAIN_CACHE", str(machine_cache("a")))
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output[-3000:]
    store = ArtifactStore(url)
    assert store.exists("results.jsonl") and store.exists("summary.json")
    assert f"published {len(store.relative_files())} files to {url}" in first.output
    rows = store.fs.cat_file(f"{store.root}/results.jsonl").decode().splitlines()

    monkeypatch.setenv("POSTTRAIN_CACHE", str(machine_cache("b")))
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, again.output[-3000:]
    assert "files fetched from it" in again.output
    assert store.fs.cat_file(f"{store.root}/results.jsonl").decode().splitlines() == rows  # nothing run twice
    assert json.loads(again.output[again.output.index("{") :])["out"] == url
