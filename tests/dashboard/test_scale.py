"""Pages stay fast on a run of 1,000 steps and 100,000 samples: every endpoint a page calls
answers in under a second (the issue's bound), filters and deep pages included."""

import json
import time
from urllib.request import urlopen

import pytest

from tests.dashboard.conftest import Server
from tests.dashboard.synthetic_run import write_synthetic_run

ENDPOINTS = [
    "/api/directories",
    "/api/directories/0",
    "/api/runs/0/metrics",
    "/api/runs/0/metrics?after=990",
    "/api/runs/0/steps",
    "/api/runs/0/samples",
    "/api/runs/0/samples?step=500",
    "/api/runs/0/samples?domain=terminal&min_reward=1",
    "/api/runs/0/samples?task=count/7&passed=false",
    "/api/runs/0/samples?min_length=40&max_length=45",
    "/api/runs/0/samples?task=no-such-task",  # matches nothing: a scan of the whole store
    "/api/runs/0/samples?after=99900",
    "/api/runs/0/samples/55555",
    "/run/0/samples",
]


@pytest.fixture(scope="module")
def big_run(tmp_path_factory):
    return write_synthetic_run(tmp_path_factory.mktemp("big") / "run")


def test_every_endpoint_answers_in_under_a_second_on_100k_samples(big_run):
    with Server([big_run]) as server:
        urlopen(server.url + "/api/runs/0/samples/1").read()  # the tokenizer loads once, on the first sample
        slowest = {}
        for path in ENDPOINTS:
            start = time.perf_counter()
            with urlopen(server.url + path, timeout=30) as response:
                body = response.read()
            slowest[path] = time.perf_counter() - start
            assert response.status == 200, path
        assert max(slowest.values()) < 1.0, slowest
        assert json.loads(urlopen(server.url + "/api/runs/0/steps").read())[-1] == {"step": 1000, "samples": 100}
        page = json.loads(urlopen(server.url + "/api/runs/0/samples?after=99990").read())
        assert [s["id"] for s in page["samples"]] == list(range(99991, 100001)) and page["next_after"] is None
        assert body.startswith(b"<!doctype html>")  # the last path is a page
