"""The dashboard as headless Chromium draws it, over the real run, eval and inspection: the
runs list, the curves (with the values of metrics.jsonl), a click from a chart to the step's
samples, a sample's coloured tokens with the engine logprob on hover, an eval episode's tool
calls, an inspection, and a new step appearing on an open page without a reload."""

import json
import shutil
import sqlite3

import pytest

from tests.dashboard.conftest import Server, open_page


def test_runs_curves_and_a_click_through_to_a_token(server, directories, page, tmp_path):
    open_page(page, server.url + "/")
    assert page.locator("#runs tr.run-row").count() == 3
    assert page.locator("#runs tr.run-row").nth(0).locator(".status").inner_text() == "finished"

    records = [json.loads(line) for line in (directories["run"] / "metrics.jsonl").read_text().splitlines()]
    open_page(page, server.url + "/run/0")
    charts = page.locator(".chart")
    assert charts.count() >= 10 and page.locator(".chart canvas").count() == charts.count()
    assert page.locator(".chart[data-title^='Held-out accuracy per domain']").count() == 1
    panels = charts.count()
    page.locator("#more-metrics").select_option("lr")  # a metric on no panel, charted on request
    page.wait_for_selector(".chart[data-title='lr'] canvas")
    assert charts.count() == panels + 1
    page.locator("#config summary").click()  # the resolved config, folded until asked for
    assert 'name": "tiny-llama"' in page.locator("#config pre").inner_text()
    shown = float(page.locator("#latest tr[data-key='grad_norm'] .value").inner_text())
    assert shown == pytest.approx(records[-1]["grad_norm"], rel=1e-5, abs=1e-9)
    page.screenshot(path=str(tmp_path / "curves.png"), full_page=True)

    over = page.locator(".chart .u-over").first.bounding_box()
    page.mouse.click(over["x"] + over["width"] - 2, over["y"] + over["height"] / 2)  # the last step
    page.wait_for_url("**/run/0/samples?step=2")
    page.wait_for_selector("body[data-ready='1']")
    rows = page.locator("#samples tr.sample-row")
    assert rows.count() == 6
    rows.first.click()
    page.wait_for_url("**/run/0/sample/*")
    page.wait_for_selector(".tokens .tok")
    sample_id = int(page.url.rsplit("/", 1)[1])
    db = sqlite3.connect(directories["run"] / "trajectories.sqlite")
    ids, logprobs = db.execute(
        "SELECT completion_token_ids, logprobs FROM trajectories WHERE id = ?", (sample_id,)
    ).fetchone()
    tokens = page.locator(".tokens .tok")
    assert tokens.count() == len(json.loads(ids))
    assert "background: hsl(" in tokens.first.get_attribute("style")  # coloured by engine logprob
    tokens.first.hover()
    assert page.locator("#tip").is_visible()
    tip = page.locator("#tip").inner_text()
    assert f"engine_logprob: {json.loads(logprobs)[0]:.5g}" in tip, tip
    page.screenshot(path=str(tmp_path / "sample.png"), full_page=True)


def test_an_eval_episode_shows_its_tool_calls_and_an_inspection_its_tasks(server, page):
    open_page(page, server.url + "/eval/1")
    assert page.locator("#attempts tr.attempt-row").count() == 1
    assert page.locator("#attempts tr.attempt-row td.outcome").inner_text() == "passed"  # one label per attempt
    assert page.locator("#eval-tasks tr.task-row td").first.inner_text() == "count-lines"
    page.locator("#attempts a").first.click()
    page.wait_for_url("**/eval/1/episode?path=*")
    page.wait_for_selector(".toolcall")
    assert "tool bash" in page.locator(".toolcall").first.inner_text()
    assert '"passed": true' in page.locator("#verifier").inner_text()
    open_page(page, server.url + "/inspect/2")
    assert page.locator("#inspected tr.task-row").count() == 1


def test_a_step_written_while_the_page_is_open_appears_without_a_reload(directories, page, tmp_path):
    run = tmp_path / "live"
    run.mkdir()
    shutil.copy(directories["run"] / "config.toml", run / "config.toml")
    lines = (directories["run"] / "metrics.jsonl").read_text().splitlines()
    with Server([run]) as server:  # a run that has started and recorded nothing yet
        open_page(page, server.url + "/run/0")
        assert page.locator("#run-status").inner_text() == "live"
        assert page.locator("#no-steps").is_visible() and page.locator(".chart").count() == 0
        with open(run / "metrics.jsonl", "a") as handle:
            handle.write(lines[0] + "\n")
        page.wait_for_function("document.getElementById('last-step').textContent === '1'", timeout=10_000)
        assert page.locator(".chart canvas").count() >= 10
        with open(run / "metrics.jsonl", "a") as handle:
            handle.write(lines[1] + "\n")
        page.wait_for_function("document.getElementById('last-step').textContent === '2'", timeout=10_000)
        loss = float(page.locator("#latest tr[data-key='loss'] .value").inner_text())
        assert loss == pytest.approx(json.loads(lines[1])["loss"], rel=1e-5, abs=1e-9)
        alarm = {"step": 3, "kind": "seesaw", "falling": {"domain": "add", "accuracy_from": 0.5, "accuracy_to": 0.25}}
        with open(run / "metrics.jsonl", "a") as handle:  # a step whose evaluation raised an alarm
            handle.write(json.dumps({**json.loads(lines[1]), "step": 3, "seesaw_alarms": [alarm]}) + "\n")
        page.wait_for_selector("#alarms .alarm", timeout=10_000)
        assert page.locator("#alarms .alarm").inner_text() == "step 3: seesaw: add fell 0.500 -> 0.250"


def test_ticked_runs_open_overlaid_on_one_chart_per_panel(directories, page, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(directories["run"] / "config.toml", other / "config.toml")
    first = (directories["run"] / "metrics.jsonl").read_text().splitlines()[0]
    (other / "metrics.jsonl").write_text(first + "\n")  # a second run that has done one step
    with Server([directories["run"], other]) as server:
        open_page(page, server.url + "/")
        page.locator(".compare-pick").nth(0).check()
        page.locator(".compare-pick").nth(1).check()
        page.locator("#compare").click()
        page.wait_for_url("**/compare?runs=0,1")
        page.wait_for_selector("body[data-ready='1']")
        loss = page.locator(".chart[data-title='Loss']")
        assert loss.get_attribute("data-series") == "4"  # loss and nll of each run
        assert loss.locator("canvas").count() == 1
        assert "other: loss" in loss.inner_text() and "run: loss" in loss.inner_text()


def test_an_eval_being_written_shows_each_attempt_as_it_finishes(directories, page, tmp_path):
    live = tmp_path / "eval-live"
    shutil.copytree(directories["eval"], live)
    (live / "summary.json").unlink()
    row = (live / "results.jsonl").read_text()
    (live / "results.jsonl").write_text("")  # started, no attempt finished yet
    with Server([live]) as server:
        open_page(page, server.url + "/eval/0")
        assert page.locator("h2 .status").inner_text() == "live"
        assert page.locator("#attempts tr.attempt-row").count() == 0
        (live / "results.jsonl").write_text(row)
        page.wait_for_selector("#attempts tr.attempt-row", timeout=10_000)
        assert page.locator("#attempts tr.attempt-row td").first.inner_text() == "count-lines"


def test_a_directory_that_is_not_a_run_is_named_on_the_page_and_the_rest_served(directories, page, tmp_path):
    stray = tmp_path / "docs"
    stray.mkdir()
    with Server([stray, directories["run"]]) as server:
        open_page(page, server.url + "/")
        assert page.locator("#runs tr.run-row").count() == 1
        problem = page.locator("#problems .problem").first.inner_text()
        assert problem.startswith(f"not shown: {stray}: not a run, eval or inspect directory")
        page.locator("#runs tr.run-row a").first.click()
        page.wait_for_url("**/run/0")
        page.wait_for_selector("body[data-ready='1']")
        assert page.locator(".chart canvas").count() >= 10
