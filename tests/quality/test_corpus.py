"""The gate on tasks written to be broken in one known way each (tests/quality/corpus,
EXPECTED.tsv says how). The built-in suite's clean run is test_builtin_suite_clean.py (a file of
its own, so the two long runs go to different test workers)."""

from pathlib import Path

import pytest

from posttrain.quality.inspector import InspectOptions, inspect_dirs
from posttrain.quality.probes import HARNESS_PROBES, PROBES

CORPUS = Path(__file__).parent / "corpus"


def expected() -> dict[str, tuple[str, str]]:
    rows = {}
    for line in (CORPUS / "EXPECTED.tsv").read_text().splitlines():
        if line and not line.startswith("#"):
            name, verdict, probe, _ = line.split("\t")
            rows[name] = (verdict, probe)
    return rows


def failed_probes(report) -> set[str]:
    return {c.name.removeprefix("probe:") for c in report.checks if c.kind == "probe" and c.status == "fail"}


def test_the_corpus_covers_every_verdict_and_probe_twice():
    from posttrain.quality.verdicts import VERDICTS

    rows = expected()
    for verdict in set(VERDICTS) - {"no_signal"}:  # no_signal needs a policy: test_signal.py
        assert sum(v == verdict for v, _ in rows.values()) >= 2, verdict
    for probe in set(PROBES) - HARNESS_PROBES:
        assert sum(p == probe for _, p in rows.values()) >= 2, probe
    assert {p.name for p in CORPUS.iterdir() if p.is_dir()} == set(rows)


@pytest.mark.timeout(900)
def test_every_flawed_task_gets_its_verdict_and_the_probe_that_breaks_it():
    rows = expected()
    flaky = [CORPUS / n for n, (v, _) in rows.items() if v == "flaky"]
    steady = [CORPUS / n for n, (v, _) in rows.items() if v != "flaky"]
    # A flaky verifier here passes half the time: 8 runs each of the solution and of doing
    # nothing all agree with probability 2 * (1/2)^8 each, so the check is all but certain.
    reports = inspect_dirs(steady, InspectOptions(repeats=2, concurrency=6, use_cache=False))
    reports += inspect_dirs(flaky, InspectOptions(repeats=8, concurrency=6, use_cache=False))
    wrong = []
    for report in reports:
        verdict, probe = rows[report.id]
        if report.verdict != verdict or (probe != "-" and probe not in failed_probes(report)):
            wrong.append(f"{report.id}: got {report.verdict} ({report.reason[:300]}), want {verdict} {probe}")
        assert report.verdict == "ok" or report.reason  # a verdict always says why
    assert not wrong, "\n".join(wrong)
    by_id = {r.id: r for r in reports}
    # the system-mode task's planted fakes in /usr/local/bin and .pth hooks were dropped before its tests ran
    system = by_id["ok-pytest-system-mode"]
    together = next(c for c in system.checks if c.name == "probe:shadow_binaries").evidence["together"]
    assert any(p.startswith("/usr/local/bin/") for p in together["verifier"]["dropped_agent_files"])
    assert any(p.endswith(".pth") for p in together["verifier"]["dropped_agent_files"])
