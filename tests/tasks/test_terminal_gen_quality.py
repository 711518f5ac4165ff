"""The quality gate on the generated families: one instance of every family at every
difficulty goes through the real inspection (bwrap sandboxes, real verifiers): the reference
solution passes, doing nothing fails, and every exploit probe fails (every template in every
wording and root: test_terminal_gen_templates.py)."""

import pytest

from posttrain.quality.inspector import InspectOptions, inspect_dirs
from posttrain.quality.probes import PROBES
from posttrain.tasks.terminal_gen import FAMILIES, generate, write_task


@pytest.mark.timeout(600)
def test_every_family_and_difficulty_passes_the_quality_gate(tmp_path):
    dirs = [
        write_task(generate(f, d, seed=1000 + 10 * i + d), tmp_path) for i, f in enumerate(FAMILIES) for d in (1, 2, 3)
    ]
    options = InspectOptions(repeats=1, min_repeats=1, concurrency=3, use_cache=False, cache_dir=tmp_path / "cache")
    reports = inspect_dirs(dirs, options)
    assert len(reports) == len(FAMILIES) * 3
    flagged = [f"{r.id}: {r.verdict}: {r.reason[:300]}" for r in reports if r.verdict != "ok"]
    assert not flagged, "\n".join(flagged)
    for report in reports:
        status = {c.name: c.status for c in report.checks}
        assert status["oracle_passes"] == "pass" and status["nop_fails"] == "pass", report.id
        probes = [c for c in report.checks if c.kind == "probe"]
        assert len(probes) == len(PROBES) and all(c.status == "pass" for c in probes), report.id
