"""The gate on the built-in terminal suite, which must come out clean: every task passes, and
every probe was played against it and failed to break it."""

from pathlib import Path

import pytest

from posttrain.quality.inspector import InspectOptions, inspect_dirs
from posttrain.quality.probes import PROBES

SUITE = Path(__file__).parents[2] / "tasks" / "terminal"


@pytest.mark.timeout(900)
def test_the_builtin_terminal_suite_passes_clean():
    dirs = sorted(d for d in SUITE.iterdir() if (d / "task.toml").is_file())
    assert len(dirs) >= 40
    reports = inspect_dirs(dirs, InspectOptions(repeats=2, concurrency=8, use_cache=False))
    flagged = [f"{r.id}: {r.verdict}: {r.reason[:300]}" for r in reports if r.verdict != "ok"]
    assert not flagged, "\n".join(flagged)
    for report in reports:  # every probe was played against it, and failed
        probes = [c for c in report.checks if c.kind == "probe"]
        assert len(probes) == len(PROBES) and all(c.status == "pass" for c in probes)
