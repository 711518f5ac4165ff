"""`posttrain eval` end to end: the built-in suite under the oracle and nop, the HTML report in
a real browser, an eval over HTTP against an OpenAI-compatible server, and kill + resume."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.sandbox.conftest import BWRAP_MISSING

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "tasks" / "terminal"
needs_bwrap = pytest.mark.skipif(bool(BWRAP_MISSING), reason=str(BWRAP_MISSING))


def posttrain(*args, timeout=900):
    return subprocess.run(
        [sys.executable, "-m", "posttrain.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )


def two_tasks_per_category() -> list[str]:
    """Every category of the suite twice: whether each task's solution passes is the quality
    gate's test (tests/quality/test_builtin_suite_clean.py); these test the harness around it."""
    import tomllib

    chosen: dict[str, list[str]] = {}
    for task in sorted(d for d in SUITE.iterdir() if (d / "task.toml").is_file()):
        category = tomllib.loads((task / "task.toml").read_text())["metadata"]["category"]
        if len(chosen.setdefault(category, [])) < 2:
            chosen[category].append(task.name)
    return [name for names in chosen.values() for name in names]


NAMES = two_tasks_per_category()


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory):
    if BWRAP_MISSING:
        pytest.skip(BWRAP_MISSING)
    out = tmp_path_factory.mktemp("eval") / "oracle"
    result = posttrain(
        "eval", "--tasks", str(SUITE), "--names", ",".join(NAMES), "--agent", "oracle", "--out", str(out)
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return out


@needs_bwrap
def test_the_oracle_passes_the_suite_and_nop_none(oracle_run, tmp_path):
    summary = json.loads((oracle_run / "summary.json").read_text())
    assert len(NAMES) == 12  # six categories
    assert summary["n_tasks"] == 12 and summary["pass_at_1"] == 1.0 and summary["mean_reward"] == 1.0
    assert summary["failure_modes"] == {} and summary["tool_call_accuracy"] == 1.0
    rows = [json.loads(line) for line in (oracle_run / "results.jsonl").read_text().splitlines()]
    assert len(rows) == summary["n_attempts"] and all((oracle_run / r["trajectory"]).is_file() for r in rows)
    assert {"setup", "agent", "verifier"} == set(rows[0]["time_s"])
    for name in ("report.md", "report.html", "performance.json", "eval.json"):
        assert (oracle_run / name).is_file(), name
    nop = tmp_path / "nop"
    result = posttrain("eval", "--tasks", str(SUITE), "--names", ",".join(NAMES), "--agent", "nop", "--out", str(nop))
    assert result.returncode == 0, result.stderr[-2000:]
    nothing = json.loads((nop / "summary.json").read_text())
    assert nothing["pass_at_1"] == 0.0 and nothing["failure_modes"] == {"wrong_answer": nothing["n_attempts"]}
    compared = posttrain("eval", "compare", str(oracle_run), str(nop))
    assert compared.returncode == 0, compared.stderr
    report = json.loads(compared.stdout)
    assert report["difference"] == -1.0 and report["difference_ci95"] == [-1.0, -1.0]


@needs_bwrap
def test_the_html_report_renders_its_plots_in_chromium(oracle_run, tmp_path):
    playwright = pytest.importorskip("playwright.sync_api")
    chromium = "/usr/bin/chromium"
    if not Path(chromium).exists():
        pytest.skip("Debian's chromium is not installed (make setup installs it as root)")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page()
        page.goto((oracle_run / "report.html").as_uri())
        shot = tmp_path / "report.png"
        page.screenshot(path=str(shot), full_page=True)
        plots = page.locator("svg.plot")
        assert plots.count() == 4
        ids = [plots.nth(i).get_attribute("id") for i in range(4)]
        assert ids == ["pass-by-category", "failure-modes", "steps", "agent-time"]
        assert page.locator("#pass-by-category rect.bar").count() == 6  # six categories
        box = page.locator("#pass-by-category rect.bar").first.bounding_box()
        assert box and box["width"] > 100  # pass rate 1.0 draws a full bar
        browser.close()
    assert shot.stat().st_size > 10_000


@needs_bwrap
def test_an_eval_over_http_against_an_openai_compatible_server(tmp_path, tokenizer):
    pytest.importorskip("fastapi")
    from posttrain.agent.loop import AgentConfig
    from posttrain.agent.policies import ModelPolicy
    from posttrain.engine.factory import engine_for_spec
    from posttrain.engine.interface import SamplingParams
    from posttrain.evaluate.runner import run_eval
    from posttrain.tasks.harbor import load_harbor_suite
    from tests.openai_test_server import MODEL, running_server

    tasks = load_harbor_suite(SUITE, names=["hello-file", "count-lines"])
    with running_server(tokenizer) as url:
        engine, tok, _ = engine_for_spec(f"openai:{url}#{MODEL}")
        policy = ModelPolicy(engine, tok, SamplingParams(temperature=0.7, max_tokens=12))
        summary = run_eval(
            tasks,
            "model",
            policy,
            tok,
            tmp_path / "http",
            attempts=2,
            concurrency=2,
            model=f"openai:{url}#{MODEL}",
            agent_config=AgentConfig(max_steps=2, reply_tokens=12),
        )
    assert summary["n_attempts"] == 4 and summary["pass_at_1"] == 0.0  # random weights
    assert summary["tokens"]["out"] > 0 and summary["failure_modes"]
    row = json.loads((tmp_path / "http" / "results.jsonl").read_text().splitlines()[0])
    trajectory = json.loads((tmp_path / "http" / row["trajectory"]).read_text())
    assert len(trajectory["turns"]) == 2 and trajectory["turns"][0]["completion_ids"]


@needs_bwrap
def test_a_killed_eval_resumes_to_the_same_summary(tmp_path):
    args = [
        "eval",
        "--tasks",
        str(SUITE),
        "--names",
        "hello-file,count-lines,csv-sum-column",
        "--agent",
        "model",
        "--model",
        "tiny-llama",
        "--attempts",
        "2",
        "--concurrency",
        "1",
        "--max-steps",
        "2",
        "--reply-tokens",
        "16",
        "--seed",
        "3",
    ]
    whole = tmp_path / "whole"
    assert posttrain(*args, "--out", str(whole)).returncode == 0
    resumed = tmp_path / "resumed"
    process = subprocess.Popen(
        [sys.executable, "-m", "posttrain.cli", *args, "--out", str(resumed)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    results = resumed / "results.jsonl"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and process.poll() is None:
        if results.is_file() and len(results.read_text().splitlines()) >= 2:
            break
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    finished = len(results.read_text().splitlines())
    assert 2 <= finished < 6, "the kill should land in the middle of the run"
    again = posttrain(*args, "--out", str(resumed))
    assert again.returncode == 0, again.stderr[-2000:]
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    assert len(rows) == 6 and len({(r["task_id"], r["attempt"]) for r in rows}) == 6  # nothing twice
    assert json.loads((resumed / "summary.json").read_text()) == json.loads((whole / "summary.json").read_text())
