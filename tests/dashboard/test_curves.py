"""Which keys go on which chart, and how records become step-aligned series."""

from posttrain.dashboard import curves


def test_each_key_goes_on_its_panel_with_the_monitor_bands():
    keys = sorted(
        ["loss", "kl", "reward/add", "reward_mean", "monitor/add/accuracy", "monitor/add/ci_low",
         "monitor/add/ci_high", "mixture/add/weight", "dispatch/retries", "conflict/add|count/cosine", "odd_key",
         "episodes_masked", "masked/sandbox_died"]
    )  # fmt: skip
    panels = {p["title"]: p for p in curves.panels(keys)}
    assert panels["Reward per domain"]["keys"] == ["reward_mean", "reward/add"]  # the mean first: drawn under
    assert panels["Reward per domain"]["means"] == ["reward_mean"] and panels["Loss"]["means"] == []
    assert panels["KL"]["keys"] == ["kl"] and panels["Loss"]["keys"] == ["loss"]
    held_out = panels["Held-out accuracy per domain (monitor, Wilson 95% CI)"]
    assert held_out["bands"] == [["monitor/add/ci_high", "monitor/add/ci_low"]]
    assert panels["Gradient conflict (cosine)"]["keys"] == ["conflict/add|count/cosine"]
    masked = panels["Episodes left out (infrastructure failures)"]
    assert masked["keys"] == ["episodes_masked", "masked/sandbox_died"]
    assert curves.unpanelled(keys) == ["odd_key"]


def test_records_of_one_step_merge_and_missing_values_are_none():
    records = [
        {"step": 1, "loss": 0.5, "mode": "sync"},
        {"step": 2, "loss": 0.25},
        {"step": 2, "round": 1, "pass_rate": 0.5},  # an SFT round's record at its last update's step
        {"step": 3, "loss": float("nan")},
    ]
    keys = curves.numeric_keys(records)
    assert keys == ["loss", "pass_rate", "round"]  # numbers only
    assert curves.series(records, keys) == {
        "steps": [1, 2, 3],
        "values": {"loss": [0.5, 0.25, None], "pass_rate": [None, 0.5, None], "round": [None, 1.0, None]},
    }


def test_a_background_monitor_evaluation_is_drawn_at_the_step_it_evaluated():
    records = [
        {"step": 2, "loss": 0.5},
        {"step": 3, "loss": 0.4, "monitor/step": 2, "monitor/add/accuracy": 0.75},  # async: landed a step late
        {"step": 4, "loss": 0.3, "monitor/step": 4, "monitor/add/accuracy": 0.5},
    ]
    assert curves.series(records, ["loss", "monitor/add/accuracy"])["values"] == {
        "loss": [0.5, 0.4, 0.3],
        "monitor/add/accuracy": [0.75, None, 0.5],
    }


def test_seesaw_alarms_are_one_line_each_at_their_step():
    alarm = {
        "step": 8,
        "kind": "seesaw",
        "falling": {"domain": "add", "accuracy_from": 0.5, "accuracy_to": 0.25},
        "rising": [{"domain": "count"}],
    }
    records = [{"step": 4, "seesaw_alarms": []}, {"step": 8, "seesaw_alarms": [alarm]}]
    assert curves.alarms(records) == [{"step": 8, "text": "seesaw: add fell 0.500 -> 0.250; count rose"}]
