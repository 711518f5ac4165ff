"""The dashboard tells a run's whole story, in headless Chromium: a warm-started run shows base ->
SFT -> RL (its base's 0.000 included) on the runs list and per held-out set and family on its
page; a flat series gets a small axis around its value, not 0-100; the mean over domains is
dashed and drawn under the domains' series, so a domain equal to it is not hidden."""

import json

import pytest

from tests.dashboard.conftest import Server, get, open_page
from tests.warm_start_run import BY_STEPS_NEEDED, expected_pass_at_1, make_warm_start_run


@pytest.fixture(scope="module")
def story_server(directories, tmp_path_factory):
    warm = make_warm_start_run(directories["run"], tmp_path_factory.mktemp("story") / "agent-run")
    with Server([warm, directories["run"]]) as running:
        yield running


def test_the_runs_list_shows_base_sft_and_rl(story_server, directories, page):
    open_page(page, story_server.url + "/")
    base, sft, rl = expected_pass_at_1()["overall"]
    results = page.locator("#runs tr.run-row").nth(0).locator("td").last.inner_text()
    assert results.startswith(f"held-out base {base:.3f} → SFT {sft:.3f} → RL {rl:.3f} (Δ 95% CI [")
    summary = json.loads((directories["run"] / "summary.json").read_text())
    before, after = summary["eval_before"]["overall"], summary["eval_after"]["overall"]
    plain = page.locator("#runs tr.run-row").nth(1).locator("td").last.inner_text()
    assert plain.startswith(f"held-out before {before:.3f} → after {after:.3f}")


def test_a_warm_started_run_shows_each_stage_per_heldout_set_and_family(story_server, page):
    open_page(page, story_server.url + "/run/0")
    expected = expected_pass_at_1()
    rows = page.locator("#story tr.story-row")
    labels = [rows.nth(i).get_attribute("data-label") for i in range(rows.count())]
    sets_and_families = ["overall", "instances", "templates", "families", "handwritten", "archives", "files-dirs"]
    assert labels == [*sets_and_families, "1 command", "3 commands"]
    for steps, label in (("1", "1 command"), ("3", "3 commands")):  # held-out pass@1 by the commands needed
        row = page.locator(f"#story tr.story-row[data-label='{label}']")
        assert row.inner_text().startswith(f"needing {label}")
        shown = [row.locator(f"td.score[data-stage='{s}']").inner_text() for s in ("base", "sft", "rl")]
        assert shown == [f"{stage[steps]:.3f}" for stage in BY_STEPS_NEEDED]
    for label in sets_and_families:
        row = page.locator(f"#story tr.story-row[data-label='{label}']")
        shown = [row.locator(f"td.score[data-stage='{s}']").inner_text().split(" [")[0] for s in ("base", "sft", "rl")]
        assert shown == [f"{v:.3f}" for v in expected[label]], label
    overall = page.locator("#story tr[data-label='overall']").inner_text()
    assert "SFT − base +0.425 [" in overall and "RL − SFT +0.200 [" in overall
    assert (
        page.locator("#story tr[data-label='instances'] td.score[data-stage='base']")
        .inner_text()
        .startswith(
            "0.000 [0.00, 0.19]"  # Wilson 95% of 0 of 16
        )
    )


def test_flat_series_get_a_small_axis_and_the_mean_is_dashed_under_the_domains(story_server, directories, page):
    open_page(page, story_server.url + "/run/1")
    staleness = page.locator(".chart[data-title='Policy-version gap']")  # 0 at every step of a sync run
    page.wait_for_selector(".chart[data-title='Policy-version gap'] canvas")
    values = get(story_server, "/api/runs/1/metrics")["values"]
    assert set(values["staleness_max"]) == {0.0}
    low, high = float(staleness.get_attribute("data-y-min")), float(staleness.get_attribute("data-y-max"))
    assert low < 0.0 < high and high - low <= 0.2, (low, high)

    reward = page.locator(".chart[data-title='Reward per domain']")
    keys = json.loads(reward.get_attribute("data-keys"))
    assert keys == ["reward_mean", "reward/add", "reward/count"]  # drawn in this order: the mean first, under
    assert json.loads(reward.get_attribute("data-dashed")) == ["reward_mean"]
    assert reward.locator(".u-legend .u-series").count() == 1 + len(keys)
    rewards = [v for k in keys for v in values[k] if v is not None]
    if len(set(rewards)) == 1:  # tiny-llama's rewards are often all 0: a flat chart too
        low, high = float(reward.get_attribute("data-y-min")), float(reward.get_attribute("data-y-max"))
        assert low < rewards[0] < high and high - low <= 0.2 * max(1.0, abs(rewards[0]))
