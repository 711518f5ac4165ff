"""Pages stay fast on a run of 1,000 steps and 100,000 samples: every endpoint a page calls
answers in under a second (the issue's bound), filters and deep pages included. The run and
the list of endpoints are benchmarks/dashboard_load.py's."""

import json
from urllib.request import urlopen

import pytest

from tests.benchmarks.scripts import load_script

bench = load_script("dashboard_load")


@pytest.fixture(scope="module")
def big_run(tmp_path_factory):
    return bench.write_synthetic_run(tmp_path_factory.mktemp("big") / "run")


def test_every_endpoint_answers_in_under_a_second_on_100k_samples(big_run):
    report = bench.measure(big_run, repeats=1)
    assert set(report["endpoints"]) == set(bench.ENDPOINTS)
    assert report["slowest_p95_s"] < 1.0, report
    with bench.ServedDashboard([big_run]) as served:
        steps = json.loads(urlopen(served.url + "/api/runs/0/steps").read())
        assert len(steps) == 1000 and steps[-1] == {"step": 1000, "samples": 100}
        page = json.loads(urlopen(served.url + "/api/runs/0/samples?after=99990").read())
        assert [s["id"] for s in page["samples"]] == list(range(99991, 100001)) and page["next_after"] is None
        terminal = json.loads(urlopen(served.url + "/api/runs/0/samples?domain=terminal&min_reward=1").read())
        assert len(terminal["samples"]) == 50 and all(
            s["domain"] == "terminal" and s["reward"] == 1.0 for s in terminal["samples"]
        )
