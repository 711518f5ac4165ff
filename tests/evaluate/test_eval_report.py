"""report.html of real evals in headless Chromium: each attempt is one row with exactly one outcome
label (passed, or its failure category) and a link to what the agent did (each command and its
output, and the trajectory's file); the steps histogram has whole-number bins."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.dashboard.conftest import browser  # noqa: F401 (the fixture: one headless Chromium for the module)
from tests.sandbox.conftest import BWRAP_MISSING

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "tasks" / "terminal" / "count-lines"
pytestmark = pytest.mark.skipif(bool(BWRAP_MISSING), reason=str(BWRAP_MISSING))


@pytest.fixture(scope="module")
def evals(tmp_path_factory):
    """{"oracle", "nop"}: one attempt of one task each, the two evals run at once."""
    base = tmp_path_factory.mktemp("report")
    made = {agent: base / agent for agent in ("oracle", "nop")}
    commands = [
        subprocess.Popen(
            [sys.executable, "-m", "posttrain.cli", "eval", "--tasks", str(TASK), "--agent", agent, "--out", str(out)],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)},
        )
        for agent, out in made.items()
    ]
    for command in commands:
        _, err = command.communicate(timeout=900)
        assert command.returncode == 0, err[-3000:]
    return made


def test_each_attempt_has_one_outcome_and_links_to_its_commands_and_outputs(evals, browser):  # noqa: F811
    page = browser.new_page()
    for agent, expected in (("oracle", "passed"), ("nop", "wrong_answer")):
        out = evals[agent]
        row = json.loads((out / "results.jsonl").read_text().splitlines()[0])
        page.goto((out / "report.html").as_uri())
        attempts = page.locator("tr.attempt")
        assert attempts.count() == 1
        assert attempts.first.locator("td.outcome").count() == 1
        assert attempts.first.locator("td.outcome").inner_text() == expected
        attempts.first.locator("a.episode-link").click()
        assert page.url.endswith("#episode-0")
        episode = page.locator("section.episode:target")
        assert episode.count() == 1 and expected in episode.locator("h3").inner_text()
        trajectory = json.loads((out / row["trajectory"]).read_text())
        calls = [c for t in trajectory["turns"] for c in t["tool_calls"]]
        shown = episode.locator("pre.command")
        assert shown.count() == len(calls)
        if agent == "oracle":  # it runs the task's solution: a command and its output
            bash = next(c for c in calls if c["name"] == "bash")
            assert shown.first.inner_text() == f"$ {bash['arguments']['command']}"
            assert episode.locator("pre.output").first.inner_text() == bash["observation"]
        assert episode.locator(f"a[href='{row['trajectory']}']").count() == 1
    page.close()


def test_the_steps_histogram_has_whole_number_bins(evals):
    report = (evals["oracle"] / "report.html").read_text()
    steps = re.search(r'<svg class="plot" id="steps".*?</svg>', report).group(0)
    labels = re.findall(r"<title>([^<]*): \d+</title>", steps)
    rows = [json.loads(line) for line in (evals["oracle"] / "results.jsonl").read_text().splitlines()]
    assert labels == [str(rows[0]["steps"])]  # one attempt: one bin, its step count
