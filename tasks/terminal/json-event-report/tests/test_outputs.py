import json
from pathlib import Path

EXPECTED_TOP = [("alice", 143, 2933.18), ("bob", 127, 1926.86), ("carol", 125, 1496.75), ("dave", 93, 1758.73),
                ("frank", 74, 444.52), ("erin", 66, None), ("grace", 56, None), ("heidi", 36, None)]


def load():
    return json.loads(Path("/app/report.json").read_text())


def test_keys():
    assert set(load()) == {"total_events", "skipped_lines", "events_by_type", "purchase_total", "top_users"}


def test_counts():
    r = load()
    assert r["total_events"] == 773
    assert r["skipped_lines"] == 27
    assert r["events_by_type"] == {"click": 215, "purchase": 83, "view": 475}
    assert isinstance(r["purchase_total"], (int, float))
    assert abs(r["purchase_total"] - 11969.83) < 0.001


def test_top_users():
    top = load()["top_users"]
    assert [(u["user"], u["events"]) for u in top] == [(u, n) for u, n, _ in EXPECTED_TOP]
    for got, (_, _, spend) in zip(top, EXPECTED_TOP):
        assert set(got) == {"user", "events", "purchase_total"}
        if spend is not None:
            assert abs(got["purchase_total"] - spend) < 0.001
    # the per-user totals of the top 8 are consistent with the grand total
    assert sum(u["purchase_total"] for u in top) <= 11969.83 + 0.01
