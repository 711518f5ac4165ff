"""The quality gate on the generated families: one instance of every family at every
difficulty goes through the real inspection (bwrap sandboxes, real verifiers): the reference
solution passes, doing nothing fails, and every exploit probe fails; and every template, in
every wording and root, solves with its reference steps and fails when nothing is done."""

import pytest

from posttrain.quality.inspector import InspectOptions, inspect_dirs
from posttrain.quality.probes import PROBES
from posttrain.tasks.terminal_gen import FAMILIES, generate, write_task
from posttrain.tasks.terminal_gen.layout import ROOTS
from posttrain.tasks.terminal_gen.wording import WORDINGS


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


@pytest.mark.slow
@pytest.mark.timeout(1200)
@pytest.mark.parametrize("family", list(FAMILIES))
def test_every_template_solves_and_doing_nothing_fails_in_real_sandboxes(tmp_path, family):
    """Every template of the family, two instances each: across them every wording and every
    root (a stated working directory, names with spaces as the seeds draw them)."""
    tasks = []
    for k, template in enumerate(FAMILIES[family].template_ids()):
        difficulty = int(template.split("/")[1][1:])
        for j in range(2):
            wording, root = WORDINGS[(2 * k + j) % len(WORDINGS)], ROOTS[(k + j) % len(ROOTS)]
            tasks.append(generate(family, difficulty, 7 + j, template=template, wording=wording, root=root))
    assert {t.root for t in tasks} == set(ROOTS) and {t.wording for t in tasks} == set(WORDINGS)
    dirs = [write_task(task, tmp_path) for task in tasks]
    options = InspectOptions(
        repeats=1, min_repeats=1, probes=(), concurrency=2, use_cache=False, cache_dir=tmp_path / "cache"
    )
    reports = inspect_dirs(dirs, options)
    assert len(reports) == len(tasks)
    failed = []
    for report in reports:
        status = {c.name: c.status for c in report.checks}
        if status.get("oracle_passes") != "pass" or status.get("nop_fails") != "pass":
            reasons = [f"{c.name}: {c.summary[:300]}" for c in report.checks if c.status not in ("pass", "skip")]
            failed.append(f"{report.id}: {reasons}")
    assert not failed, "\n".join(failed)
