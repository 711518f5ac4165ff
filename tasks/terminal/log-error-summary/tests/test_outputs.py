import hashlib
import os
from pathlib import Path

EXPECTED = [
    ("E1001", 111), ("E2040", 59), ("E4004", 58), ("E1002", 39),
    ("E3101", 22), ("E3100", 21), ("E5000", 11), ("E9999", 1),
]


def test_summary_exact():
    text = Path("/app/error_summary.txt").read_text()
    lines = text.rstrip("\n").split("\n")
    assert lines == [f"{c} {n}" for c, n in EXPECTED]


def test_logs_dir_untouched():
    assert sorted(os.listdir("/app/logs")) == sorted(
        ["README.txt", "app.log", "app.log.1", "app.log.2.gz", "app.log.3.gz", "worker.log"])
