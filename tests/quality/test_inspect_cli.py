"""`posttrain inspect` end to end: the CLI, its four outputs, and the signal check with a real
(tiny, untrained) policy."""

import json
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

CORPUS = Path(__file__).parent / "corpus"


def inspect(*args, timeout=600):
    return subprocess.run(
        [sys.executable, "-m", "posttrain.cli", "inspect", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


class _Ids(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.tags = set(), []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.ids.update(v for k, v in attrs if k == "id")


def test_help_explains_the_verdicts():
    result = inspect("--help")
    assert result.returncode == 0
    for word in ("unsolvable", "broken_verifier", "flaky", "exploitable", "no_signal", "quarantine", "--repeats"):
        assert word in result.stdout


@pytest.mark.timeout(600)
def test_cli_writes_report_quarantine_and_html(tmp_path):
    suite = tmp_path / "suite"
    suite.mkdir()
    for name in ("ok-sum-bash", "broken-always-passes", "invalid-no-test-sh", "unhealthy-build-fails"):
        (suite / name).symlink_to(CORPUS / name)
    result = inspect(suite, "--out", tmp_path / "out", "--repeats", "2", "--no-cache")
    assert result.returncode == 1, result.stderr[-2000:]  # tasks were quarantined
    summary = json.loads(result.stdout[result.stdout.index("{") :])
    assert summary["quarantined"] == 3 and summary["verdicts"] == {
        "ok": 1,
        "broken_verifier": 1,
        "invalid": 1,
        "unhealthy": 1,
    }
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    verdicts = {t["id"]: t["verdict"] for t in report["tasks"]}
    assert verdicts["ok-sum-bash"] == "ok" and verdicts["invalid-no-test-sh"] == "invalid"
    ok = next(t for t in report["tasks"] if t["id"] == "ok-sum-bash")
    oracle = next(c for c in ok["checks"] if c["name"] == "oracle_passes")
    run = oracle["evidence"]["runs"][0]
    assert run["reward"] == 1.0 and run["steps"][0]["command"].endswith("bash /solution/solve.sh")
    assert run["steps"][0]["exit_code"] == 0 and run["duration_s"] > 0
    quarantine = (tmp_path / "out" / "quarantine.txt").read_text().splitlines()
    assert sorted(line.split("\t")[0] for line in quarantine if not line.startswith("#")) == [
        "broken-always-passes",
        "invalid-no-test-sh",
        "unhealthy-build-fails",
    ]
    assert "| broken-always-passes | broken_verifier |" in (tmp_path / "out" / "report.md").read_text()
    page = _Ids()
    page.feed((tmp_path / "out" / "report.html").read_text())
    assert "verdicts" in page.ids and "task-ok-sum-bash" in page.ids and "svg" in page.tags
    _render_in_chromium(tmp_path / "out" / "report.html", tmp_path / "report.png")


def _render_in_chromium(report: Path, shot: Path) -> None:
    """The page as a browser draws it: the verdict chart's bars and one section per task."""
    playwright = pytest.importorskip("playwright.sync_api")
    if not Path("/usr/bin/chromium").exists():
        pytest.skip("Debian's chromium is not installed (make setup installs it as root)")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = browser.new_page()
        page.goto(report.as_uri())
        page.screenshot(path=str(shot), full_page=True)
        assert page.locator("svg#verdicts rect.bar").count() == 8  # one bar per verdict
        widths = [page.locator("svg#verdicts rect.bar").nth(i).bounding_box()["width"] for i in range(8)]
        assert sum(w > 0 for w in widths) == 4  # ok, broken_verifier, invalid, unhealthy: one task each
        assert page.locator("section.task").count() == 4
        assert page.locator("section.task.broken_verifier tr.fail").count() >= 1
        browser.close()
    assert shot.stat().st_size > 10_000


@pytest.mark.timeout(600)
def test_signal_check_marks_tasks_an_untrained_policy_never_solves(tmp_path):
    from posttrain.quality.gate import run_inspection
    from posttrain.quality.inspector import InspectOptions

    dirs = [CORPUS / "ok-sum-bash", CORPUS / "ok-pytest-system-mode"]
    report = run_inspection(
        CORPUS,
        tmp_path,
        InspectOptions(repeats=1, probes=(), concurrency=4),
        policy="tiny-llama",
        samples=2,
        policy_max_steps=2,
        policy_reply_tokens=16,
        dirs=dirs,
    )
    assert {t["id"]: t["verdict"] for t in report["tasks"]} == {
        "ok-sum-bash": "no_signal",
        "ok-pytest-system-mode": "no_signal",
    }
    signal = next(c for c in report["tasks"][0]["checks"] if c["name"] == "signal")
    assert signal["evidence"] == {"passed": 0, "samples": 2} and "too hard" in signal["summary"]
    assert report["difficulty_histogram"]["counts"][0] == 2


def test_apply_signal_marks_too_easy_and_keeps_the_rest():
    from posttrain.quality.inspector import TaskReport, apply_signal

    reports = [TaskReport("easy", "-"), TaskReport("fine", "-")]
    apply_signal(reports, {"easy": (4, 4), "fine": (1, 4)})
    assert (reports[0].verdict, reports[1].verdict) == ("no_signal", "ok")
    assert "too easy" in reports[0].reason and reports[1].pass_rate == 0.25


def test_a_misspelt_task_toml_key_makes_the_task_invalid(tmp_path):
    suite = tmp_path / "suite"
    shutil.copytree(CORPUS / "ok-sum-bash", suite / "typo")
    toml = suite / "typo" / "task.toml"
    toml.write_text(toml.read_text().replace("memory_mb", "memroy_mb"))
    assert "memroy_mb" in toml.read_text()
    result = inspect(suite, "--out", tmp_path / "out", "--no-cache")
    assert result.returncode == 1, result.stderr[-2000:]
    (task,) = json.loads((tmp_path / "out" / "report.json").read_text())["tasks"]
    assert task["verdict"] == "invalid"
    assert "unknown key environment.memroy_mb (did you mean memory_mb?)" in task["reason"]


def test_tasks_is_spelled_as_eval_spells_it_and_the_argument_still_works(tmp_path):
    suite = tmp_path / "suite"
    shutil.copytree(Path(__file__).parents[2] / "tasks" / "terminal" / "hello-file", suite / "no-tests")
    (suite / "no-tests" / "tests" / "test.sh").unlink()  # invalid: judged without a sandbox
    for name, given in (("option", ["--tasks", suite]), ("argument", [suite])):
        out = tmp_path / name
        result = inspect(*given, "--out", out)
        assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr[-2000:]
        assert json.loads((out / "report.json").read_text())["summary"]["verdicts"]["invalid"] == 1
    both = inspect(tmp_path, "--tasks", suite, "--out", tmp_path / "x")
    assert both.returncode == 2 and both.stderr.strip() == (
        f"error: --tasks {suite} and the argument {tmp_path} name different things: give one"
    )
    neither = inspect("--out", tmp_path / "x")
    assert neither.returncode == 2 and "error: --tasks is required" in neither.stderr
