"""Stored inspections: an unchanged task gets its stored report back; any change to its files or
to the options inspects it again; --no-cache inspects anew; a damaged store is a miss."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from posttrain.quality.inspection_cache import InspectionCache, task_fingerprint
from posttrain.quality.inspector import InspectOptions, inspect_dirs

CORPUS = Path(__file__).parent / "corpus"


def _inspect(task: Path, cache: Path, **options):
    [report] = inspect_dirs([task], InspectOptions(concurrency=2, cache_dir=cache, **{"repeats": 1, **options}))
    return report


def test_task_fingerprint_sees_content_mode_and_names(tmp_path):
    task = tmp_path / "t"
    shutil.copytree(CORPUS / "ok-sum-bash", task)
    first = task_fingerprint(task)
    assert task_fingerprint(task) == first
    (task / "solution" / "solve.sh").chmod(0o700)
    assert task_fingerprint(task) != first
    moved = task_fingerprint(task)
    (task / "tests" / "extra.txt").write_text("")
    assert task_fingerprint(task) != moved


@pytest.mark.timeout(300)
def test_unchanged_task_reuses_its_stored_inspection_and_a_change_does_not(tmp_path):
    task, cache = tmp_path / "ok-sum-bash", tmp_path / "cache"
    shutil.copytree(CORPUS / "ok-sum-bash", task)

    fresh = _inspect(task, cache)
    assert fresh.verdict == "ok" and fresh.cached_from is None
    reused = _inspect(task, cache)
    assert reused.verdict == "ok" and reused.cached_from is not None
    assert [c.to_dict() for c in reused.checks] == json.loads(
        json.dumps([c.to_dict() for c in fresh.checks], default=str)
    )

    assert _inspect(task, cache, repeats=2).cached_from is None  # other options, another inspection
    assert _inspect(task, cache, use_cache=False).cached_from is None

    # the verifier now passes whatever happened: the edited task is inspected again and caught
    (task / "tests" / "test.sh").write_text(
        "#!/bin/bash\nmkdir -p /logs/verifier\necho 1 > /logs/verifier/reward.txt\n"
    )
    edited = _inspect(task, cache)
    assert edited.cached_from is None and edited.verdict == "broken_verifier"
    assert _inspect(task, cache).verdict == "broken_verifier"


@pytest.mark.timeout(300)
def test_a_damaged_store_is_a_miss_and_is_replaced(tmp_path):
    task, cache = tmp_path / "ok-sum-bash", tmp_path / "cache"
    shutil.copytree(CORPUS / "ok-sum-bash", task)
    _inspect(task, cache)
    [stored] = list(cache.rglob("*.json"))
    stored.write_text("{not json")
    again = _inspect(task, cache)
    assert again.cached_from is None and again.verdict == "ok"
    assert InspectionCache(cache).get(stored.stem) is not None


@pytest.mark.timeout(300)
def test_cli_reports_reused_tasks_and_no_cache_inspects_anew(tmp_path):
    suite = tmp_path / "suite"
    shutil.copytree(CORPUS / "ok-sum-bash", suite / "ok-sum-bash")

    def run(*extra):
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "posttrain.cli",
                "inspect",
                str(suite),
                "--out",
                str(tmp_path / "out"),
                "--repeats",
                "1",
                "--cache-dir",
                str(tmp_path / "cache"),
                *extra,
            ],
            capture_output=True,
            text=True,
            timeout=280,
        )
        assert result.returncode == 0, result.stderr[-2000:]
        return json.loads((tmp_path / "out" / "report.json").read_text())["summary"]

    assert run()["from_cache"] == 0
    assert run()["from_cache"] == 1
    assert "reused from stored inspections" in (tmp_path / "out" / "report.md").read_text()
    assert run("--no-cache")["from_cache"] == 0
