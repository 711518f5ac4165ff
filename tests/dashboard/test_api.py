"""The dashboard's endpoints over a real training run, eval run and inspection, compared with
the files the commands wrote."""

import json
import sqlite3
from urllib.error import HTTPError
from urllib.parse import quote
from urllib.request import urlopen

import pytest

from tests.dashboard.conftest import Server, get


def status_of(server, path) -> tuple[int, str]:
    try:
        urlopen(server.url + path, timeout=30)
    except HTTPError as error:
        return error.code, json.loads(error.read())["detail"]
    return 200, ""


def test_the_runs_list_shows_each_directory_with_its_kind_status_and_results(server, directories):
    listed = get(server, "/api/directories")
    assert [(d["kind"], d["name"], d["status"]) for d in listed] == [
        ("run", "run", "finished"),
        ("eval", "eval", "finished"),
        ("inspect", "inspect", "finished"),
    ]
    run = listed[0]
    summary = json.loads((directories["run"] / "summary.json").read_text())
    assert run["step"] == 2 and run["steps_planned"] == 2 and run["domains"] == ["add", "count"]
    assert run["heldout"]["before"] == summary["eval_before"] and run["heldout"]["after"] == summary["eval_after"]
    assert listed[1]["summary"]["pass_at_1"] == 1.0  # the oracle solves its task
    assert listed[2]["summary"]["n_tasks"] == 1


def test_curves_hold_every_recorded_value_by_step_with_the_monitor_bands(server, directories):
    records = [json.loads(line) for line in (directories["run"] / "metrics.jsonl").read_text().splitlines()]
    curves = get(server, "/api/runs/0/metrics")
    assert curves["steps"] == [r["step"] for r in records] == [1, 2]
    for key in ("loss", "kl", "entropy", "grad_norm", "logprob_mismatch_max", "step_s", "mixture/add/weight"):
        assert curves["values"][key] == [r.get(key) for r in records], key
    accuracy = next(p for p in curves["panels"] if p["title"].startswith("Held-out accuracy per domain"))
    assert {"monitor/add/accuracy", "monitor/add/ci_low", "monitor/add/ci_high"} <= set(accuracy["keys"])
    assert ["monitor/add/ci_high", "monitor/add/ci_low"] in accuracy["bands"]
    titles = [p["title"] for p in curves["panels"]]
    assert {"Reward per domain", "Loss", "KL", "Grad norm", "Mixture weights"} <= set(titles)
    assert curves["problems"] == [] and curves["status"] == "finished"
    newer = get(server, "/api/runs/0/metrics?after=1")  # what a polling page asks for
    assert newer["steps"] == [2] and newer["values"]["loss"] == [records[1]["loss"]]


def test_samples_of_a_step_page_by_page_and_by_filter(server, directories):
    db = sqlite3.connect(directories["run"] / "trajectories.sqlite")
    expected = [r[0] for r in db.execute("SELECT id FROM trajectories WHERE step = 2 ORDER BY id")]
    steps = get(server, "/api/runs/0/steps")
    assert [s["step"] for s in steps] == [1, 2] and steps[1]["samples"] == len(expected) == 6
    first = get(server, "/api/runs/0/samples?step=2&size=4")
    second = get(server, f"/api/runs/0/samples?step=2&size=4&after={first['next_after']}")
    assert [s["id"] for s in first["samples"] + second["samples"]] == expected and second["next_after"] is None
    add = get(server, "/api/runs/0/samples?domain=add")["samples"]
    assert add and all(s["domain"] == "add" for s in add)
    assert get(server, "/api/runs/0/samples?min_reward=2")["samples"] == []
    assert all(s["length"] <= 2 for s in get(server, "/api/runs/0/samples?max_length=2")["samples"])


def test_a_sample_has_its_tokens_with_the_stored_engine_logprobs(server, directories):
    db = sqlite3.connect(directories["run"] / "trajectories.sqlite")
    sample_id, ids, logprobs, advantage = db.execute(
        "SELECT id, completion_token_ids, logprobs, advantage FROM trajectories ORDER BY id DESC LIMIT 1"
    ).fetchone()
    sample = get(server, f"/api/runs/0/samples/{sample_id}")
    assert sample["tokens"]["id"] == json.loads(ids)
    assert sample["tokens"]["engine_logprob"] == json.loads(logprobs)
    assert len(sample["tokens"]["text"]) == len(json.loads(ids)) and sample["advantage"] == advantage
    assert sample["prompt"].startswith("<|im_start|>")  # decoded with the run's tokenizer


def test_an_eval_run_shows_its_attempts_and_an_episode_its_tool_calls(server, directories):
    results = get(server, "/api/evals/1/results")
    assert [r["task_id"] for r in results["rows"]] == ["count-lines"] and results["problems"] == []
    episode = get(server, "/api/evals/1/episode?path=" + quote(results["rows"][0]["trajectory"]))
    calls = [c for t in episode["turns"] for c in t["tool_calls"]]
    assert calls and calls[0]["name"] == "bash" and episode["reward"]["passed"] is True
    assert status_of(server, "/api/evals/1/episode?path=../eval.json")[0] == 404  # only trajectories/


def test_an_inspection_shows_its_tasks_and_verdicts(server, directories):
    report = json.loads((directories["inspect"] / "report.json").read_text())
    tasks = get(server, "/api/inspections/2/tasks")["tasks"]
    assert [(t["id"], t["verdict"]) for t in tasks] == [(t["id"], t["verdict"]) for t in report["tasks"]]


def test_a_wrong_index_or_kind_is_a_404_naming_it(server):
    assert status_of(server, "/api/runs/7/metrics") == (404, "no directory 7: the dashboard shows 3")
    code, detail = status_of(server, "/api/runs/1/metrics")
    assert code == 404 and "is an eval directory, not a run directory" in detail
    assert status_of(server, "/api/runs/0/samples/999999")[0] == 404


def test_a_corrupt_metrics_line_is_reported_and_the_rest_served(tmp_path, directories):
    run = tmp_path / "run"
    run.mkdir()
    lines = (directories["run"] / "metrics.jsonl").read_text().splitlines()
    (run / "metrics.jsonl").write_text(lines[0] + "\n{not json\n" + lines[1] + "\n" + '{"step": 3, "loss"')
    with Server([run]) as served:
        curves = get(served, "/api/runs/0/metrics")
        assert curves["steps"] == [1, 2]  # the torn last line is a record still being written
        assert curves["problems"] == ["metrics.jsonl:2: not JSON; line skipped"]
        assert get(served, "/api/directories")[0]["status"] == "live"  # written just now, no summary
        with open(run / "metrics.jsonl", "a") as handle:  # the writer finishes its line: a poll reads it
            handle.write(": 0.5}\n")
        assert get(served, "/api/runs/0/metrics?after=2")["steps"] == [3]
        assert get(served, "/api/runs/0/samples")["samples"] == []  # no trajectories.sqlite yet
        (run / "trajectories.sqlite").write_bytes(b"not a database, " * 100)
        assert status_of(served, "/api/runs/0/samples") == (
            422,
            f"{run}/trajectories.sqlite: cannot be read (file is not a database)",
        )
        assert get(served, "/api/runs/0/metrics")["steps"] == [1, 2, 3]  # the rest is still served


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: None, "no such directory"),
        (lambda p: p.mkdir(), "not a run, eval or inspect directory (it has none of report.json"),
        (lambda p: p.write_text("x"), "not a directory"),
    ],
)
def test_a_directory_that_is_not_a_run_is_one_error_line_naming_it(tmp_path, make, message):
    import os
    import subprocess
    import sys

    target = tmp_path / "thing"
    make(target)
    result = subprocess.run(
        [sys.executable, "-m", "posttrain.cli", "dashboard", str(target)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip() == f"error: {target}: {message}" or message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and str(target) in result.stderr


def test_prometheus_metrics_hold_each_runs_latest_step_with_domains_as_labels(server, directories):
    from prometheus_client.parser import text_string_to_metric_families

    last = json.loads((directories["run"] / "metrics.jsonl").read_text().splitlines()[-1])
    with urlopen(server.url + "/metrics", timeout=30) as response:
        assert response.headers["Content-Type"].startswith("text/plain")
        text = response.read().decode()
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }
    run = ("run", "run")
    assert samples[("posttrain_step", (run,))] == 2 and samples[("posttrain_live", (run,))] == 0
    assert samples[("posttrain_loss", (run,))] == pytest.approx(last["loss"])
    assert samples[("posttrain_dispatch_workers", (run,))] == last["dispatch/workers"]
    weight = samples[("posttrain_mixture_weight", (("domain", "add"), run))]
    assert weight == pytest.approx(last["mixture/add/weight"])
    accuracy = samples[("posttrain_monitor_accuracy", (("domain", "count"), run))]
    assert accuracy == pytest.approx(last["monitor/count/accuracy"])


def test_each_token_has_the_trainers_logprob_and_the_worst_difference_is_the_steps_mismatch(server, directories):
    """One view from a metric to a token: the largest trainer-engine difference among a step's
    tokens is the logprob_mismatch_max recorded for the step."""
    records = [json.loads(line) for line in (directories["run"] / "metrics.jsonl").read_text().splitlines()]
    for record in records:
        ids = [s["id"] for s in get(server, f"/api/runs/0/samples?step={record['step']}")["samples"]]
        tokens = [get(server, f"/api/runs/0/samples/{i}")["tokens"] for i in ids]
        assert all(len(t["trainer_logprob"]) == len(t["entropy"]) == len(t["id"]) for t in tokens)
        worst = max(abs(d) for t in tokens for d in t["difference"])
        assert worst == pytest.approx(record["logprob_mismatch_max"], abs=1e-7)
        entropy = sum(sum(t["entropy"]) for t in tokens) / sum(len(t["id"]) for t in tokens)
        assert entropy == pytest.approx(record["entropy"], rel=1e-5)
