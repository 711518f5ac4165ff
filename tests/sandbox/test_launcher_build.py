"""The sandbox launcher is compiled once per machine, also when many threads ask at once."""

import os
import shutil
import threading

import pytest

from posttrain.sandbox import launcher_build


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")
def test_threads_asking_at_once_on_a_fresh_machine_all_get_the_launcher(tmp_path, monkeypatch):
    monkeypatch.setenv("POSTTRAIN_CACHE", str(tmp_path))
    launcher_build._launcher_path.cache_clear()
    results, errors = [], []
    start = threading.Barrier(8)

    def ask():
        start.wait()
        try:
            results.append(launcher_build.launcher_path())
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    launcher_build._launcher_path.cache_clear()  # the next test's cache is its own
    assert not errors
    assert len(set(results)) == 1 and results[0].startswith(str(tmp_path))
    assert os.access(results[0], os.X_OK)
    assert [p.name for p in (tmp_path / "bin").iterdir()] == [os.path.basename(results[0])]  # no temporaries left
