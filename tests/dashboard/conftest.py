"""Real directories for the dashboard's tests, made once per session by the real commands:
a 2-step training run of tiny-llama with the per-domain monitor, an oracle
eval of one terminal task, and an inspection of it; and a dashboard server over them."""

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.request import urlopen

import pytest

from tests.benchmarks.scripts import load_script
from tests.conftest import write_tiny_config

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "tasks" / "terminal" / "count-lines"
EXTRA_CONFIG = "\n[monitor]\nevery = 1\nitems = 4\n"


def _posttrain(*args) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "posttrain.cli", *map(str, args)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)},
    )


@pytest.fixture(scope="session")
def directories(tmp_path_factory):
    """{"run", "eval", "inspect"}: the three made side by side (their commands run at once)."""
    base = tmp_path_factory.mktemp("dashboard")
    config = write_tiny_config(base, steps=2, checkpoint_every=2)
    config.write_text(config.read_text() + EXTRA_CONFIG)
    made = {"run": base / "run", "eval": base / "eval", "inspect": base / "inspect"}
    commands = [
        _posttrain("train", config, "--out", made["run"]),
        _posttrain("eval", "--tasks", TASK, "--agent", "oracle", "--out", made["eval"], "--concurrency", "1"),
        _posttrain(
            "inspect", TASK, "--out", made["inspect"], "--repeats", "1", "--min-repeats", "1", "--probes", "edit_tests"
        ),
    ]
    for command in commands:
        _, err = command.communicate(timeout=300)
        assert command.returncode in (0, 1), err[-3000:]  # inspect exits 1 when it quarantines
    assert (made["run"] / "summary.json").is_file() and (made["eval"] / "summary.json").is_file()
    assert (made["inspect"] / "report.json").is_file()
    return made


# uvicorn serving create_app(paths) in a thread of this process, on a free port
Server = load_script("dashboard_load").ServedDashboard


@pytest.fixture(scope="module")  # Playwright's sync API holds an asyncio loop open: end it with the module,
def browser():  # or every later test that runs asyncio (or Playwright) in this process fails
    playwright = pytest.importorskip("playwright.sync_api")
    if not Path("/usr/bin/chromium").exists():
        pytest.skip("Debian's chromium is not installed (make setup installs it as root)")
    with playwright.sync_playwright() as p:
        launched = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture
def page(browser):
    """A fresh tab of the module's browser."""
    opened = browser.new_page(viewport={"width": 1280, "height": 900})
    yield opened
    opened.close()


def open_page(page, url):
    """Go to a dashboard page and wait until it has drawn; a page that failed says why."""
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']", timeout=20_000)
    assert page.locator("#error").count() == 0, page.locator("#error").inner_text()


def get(server, path):
    """The JSON of one endpoint."""
    with urlopen(server.url + path, timeout=30) as response:
        return json.loads(response.read())


@pytest.fixture(scope="session")
def server(directories):
    with Server([directories["run"], directories["eval"], directories["inspect"]]) as running:
        yield running
