"""A run of 108 domains on the dashboard: one sortable table row per domain (kind, the gate's
verdict, pass rate now, change since the start, an inline SVG sparkline, samples) instead of a
hundred curves, as headless Chromium draws it, and the rows the endpoint serves."""

import json
import random

import pytest

from posttrain.dashboard.curves import panels
from tests.dashboard.conftest import Server, get, open_page

STEPS, GROUP = 20, 4
ANSWER = [f"rg-gen{i:03d}" for i in range(100)]
TERMINAL = [f"term-family{i}" for i in range(6)]
DOMAINS = [*ANSWER, *TERMINAL, "scene"]
DROPPED = "rg-constant"  # dropped by the gate: in the config, never trained


def write_run(path):
    """config.toml, metrics.jsonl (held-out checks every 5 steps on the answer domains, training
    pass rates on all) and the answer gate's report, as a run of these domains writes them."""
    path.mkdir(parents=True)
    rng = random.Random(0)
    entries = [f'[[domains]]\nname = "{d}"\nsource = "reasoning-gym:{d[3:]}"\n' for d in ANSWER + [DROPPED]]
    entries += [f'[[domains]]\nname = "{d}"\nsource = "terminal-gen:{d[5:]}"\nkind = "terminal"\n' for d in TERMINAL]
    entries.append('[[domains]]\nname = "scene"\nsource = "scene:1-3"\n')
    (path / "config.toml").write_text(
        f'[model]\nname = "tiny-llama"\n[rollout]\ngroup_size = {GROUP}\n[train]\nsteps = {STEPS}\n' + "".join(entries)
    )
    slope = {d: (i - 50) / 5000 for i, d in enumerate(DOMAINS)}  # gen000 falls most, scene rises most
    records = []
    for step in range(1, STEPS + 1):
        task_ids = [f"{d}/{step}" for d in rng.sample(DOMAINS, 16)]
        record = {"step": step, "task_ids": task_ids, "reward_mean": 0.4, "pass_rate": 0.4}
        for d in DOMAINS:
            rate = min(1.0, max(0.0, 0.4 + slope[d] * step))
            record[f"reward/{d}"] = rate
            record[f"mixture/{d}/pass_rate"] = rate
            if step % 5 == 0 and d in ANSWER:
                record[f"monitor/{d}/accuracy"] = rate
        records.append(record)
    (path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    verdicts = [{"id": d, "kind": "domain", "verdict": "ok", "items_quarantined": 0} for d in ANSWER]
    verdicts.append({"id": DROPPED, "kind": "domain", "verdict": "broken_verifier", "reason": "accepts a constant"})
    (path / "quality" / "answers").mkdir(parents=True)
    (path / "quality" / "answers" / "report.json").write_text(json.dumps({"summary": {}, "tasks": verdicts}))
    (path / "summary.json").write_text("{}")
    return records


@pytest.fixture(scope="module")
def hundred(tmp_path_factory):
    run = tmp_path_factory.mktemp("hundred") / "run"
    records = write_run(run)
    with Server([run]) as served:
        yield served, records


def test_the_endpoint_serves_a_row_per_domain_with_its_gate_verdict_and_series(hundred):
    served, records = hundred
    body = get(served, "/api/runs/0/domains")
    rows = {r["domain"]: r for r in body["rows"]}
    assert body["many"] and set(rows) == {*DOMAINS, DROPPED}
    assert rows["rg-gen000"]["measure"] == "held-out" and rows["scene"]["measure"] == "training"
    assert rows["rg-gen000"]["now"] == pytest.approx(records[-1]["monitor/rg-gen000/accuracy"])
    checks = [r["monitor/rg-gen000/accuracy"] for r in records if "monitor/rg-gen000/accuracy" in r]
    assert rows["rg-gen000"]["change"] == pytest.approx(checks[-1] - checks[0]) and len(checks) == 4
    assert (rows["term-family0"]["kind"], rows["scene"]["kind"], rows["rg-gen007"]["kind"]) == (
        "terminal",
        "scene",
        "answer",
    )
    assert rows[DROPPED]["gate"] == "broken_verifier" and rows[DROPPED]["now"] is None
    assert rows[DROPPED]["samples"] == 0 and rows["rg-gen001"]["gate"] == "ok" and rows["scene"]["gate"] is None
    drawn = sum(t.startswith("scene/") for r in records for t in r["task_ids"])
    assert rows["scene"]["samples"] == GROUP * drawn and len(rows["scene"]["spark"]) == STEPS


def test_a_hundred_domains_make_no_hundred_curves():
    keys = sorted({f"reward/{d}" for d in DOMAINS} | {"reward_mean", "loss"} | {f"mixture/{d}/weight" for d in DOMAINS})
    titles = {p["title"]: p["keys"] for p in panels(keys)}
    assert titles["Reward per domain"] == ["reward_mean"] and "Mixture weights" not in titles
    few = panels(["reward/a", "reward/b", "reward_mean"])
    assert few[0]["keys"] == ["reward_mean", "reward/a", "reward/b"]


def test_the_run_page_draws_a_sortable_table_of_domains_with_sparklines(hundred, page, tmp_path):
    served, _ = hundred
    open_page(page, served.url + "/run/0")
    rows = page.locator("#domains tr.domain-row")
    assert rows.count() == len(DOMAINS) + 1
    assert page.locator("#domains tr.domain-row svg.spark polyline").count() == len(DOMAINS)  # not the dropped one
    assert page.locator(f"#domains tr[data-domain='{DROPPED}']").get_attribute("class").split() == [
        "domain-row",
        "dropped",
    ]
    page.locator("#domains th[data-key='change']").click()  # the biggest rise first
    first = [rows.nth(i).get_attribute("data-domain") for i in range(3)]
    assert first[0] == "scene" and page.locator("#domains th[data-key='change']").get_attribute("aria-sort") == (
        "descending"
    )
    changes = [rows.nth(i).locator("td").nth(4).inner_text() for i in range(len(DOMAINS))]
    values = [float(c) for c in changes]
    assert values == sorted(values, reverse=True)
    page.locator("#domains th[data-key='change']").click()  # again: the biggest fall first
    assert rows.nth(0).get_attribute("data-domain") == "rg-gen000"
    page.locator("#domains th[data-key='domain']").click()
    assert [rows.nth(i).get_attribute("data-domain") for i in range(2)] == ["rg-constant", "rg-gen000"]
    assert page.locator(".chart[data-title='Reward per domain']").count() == 1
    page.screenshot(path=str(tmp_path / "hundred.png"), full_page=True)
