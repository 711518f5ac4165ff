"""Every template of every generated family, in every wording and root, solves with its
reference steps and fails when nothing is done, in real bwrap sandboxes (the full inspection
with exploit probes, one instance per cell: test_terminal_gen_quality.py)."""

import pytest

from posttrain.quality.inspector import InspectOptions, inspect_dirs
from posttrain.tasks.terminal_gen import FAMILIES, generate, write_task
from posttrain.tasks.terminal_gen.layout import ROOTS
from posttrain.tasks.terminal_gen.wording import WORDINGS


@pytest.mark.slow
@pytest.mark.timeout(1200)
@pytest.mark.parametrize("family", list(FAMILIES))
def test_every_template_solves_and_doing_nothing_fails_in_real_sandboxes(tmp_path, family):
    """Every template of the family, one instance each: across them every wording and every
    root (a stated working directory, names with spaces as the seeds draw them)."""
    tasks = []
    for k, template in enumerate(FAMILIES[family].template_ids()):
        difficulty = int(template.split("/")[1][1:])
        wording, root = WORDINGS[k % len(WORDINGS)], ROOTS[k % len(ROOTS)]
        tasks.append(generate(family, difficulty, 7 + k, template=template, wording=wording, root=root))
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
