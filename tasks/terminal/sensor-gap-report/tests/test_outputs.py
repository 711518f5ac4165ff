import json
from pathlib import Path

SUMMARY = {
    "s-01": {"first": "2024-06-01T06:00:00Z", "last": "2024-06-01T11:58:00Z", "max_gap_minutes": 8, "mean": 22.39,
             "readings": 167},
    "s-02": {"first": "2024-06-01T06:00:00Z", "last": "2024-06-01T11:58:00Z", "max_gap_minutes": 32, "mean": 22.454,
             "readings": 136},
    "s-03": {"first": "2024-06-01T06:00:00Z", "last": "2024-06-01T11:57:00Z", "max_gap_minutes": 5, "mean": 23.183,
             "readings": 160},
    "t-10": {"first": "2024-06-01T06:00:00Z", "last": "2024-06-01T06:28:00Z", "max_gap_minutes": 5, "mean": 22.239,
             "readings": 17},
}


def test_gaps_csv():
    assert Path("/app/sensors/gaps.csv").read_text().splitlines() == [
        "sensor_id,gap_start,gap_end,minutes",
        "s-01,2024-06-01T06:39:00Z,2024-06-01T06:47:00Z,8",
        "s-01,2024-06-01T09:20:00Z,2024-06-01T09:26:00Z,6",
        "s-02,2024-06-01T07:27:00Z,2024-06-01T07:36:00Z,9",
        "s-02,2024-06-01T10:58:00Z,2024-06-01T11:30:00Z,32",
    ]


def test_summary_json():
    got = json.loads(Path("/app/sensors/summary.json").read_text())
    assert set(got) == set(SUMMARY)
    for sensor, want in SUMMARY.items():
        g = got[sensor]
        assert set(g) == set(want), sensor
        for key in ("first", "last", "max_gap_minutes", "readings"):
            assert g[key] == want[key], (sensor, key)
        assert isinstance(g["mean"], (int, float)) and abs(g["mean"] - want["mean"]) < 0.0011, sensor
