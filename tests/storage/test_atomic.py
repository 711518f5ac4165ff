import json
import threading

import pytest

from posttrain.storage.atomic import write_json_atomic, write_text_atomic


def test_replaces_the_whole_file_and_leaves_no_temp(tmp_path):
    path = tmp_path / "summary.json"
    path.write_text("old")
    write_json_atomic(path, {"b": 1, "a": {"when": tmp_path}})
    assert json.loads(path.read_text()) == {"a": {"when": str(tmp_path)}, "b": 1}
    assert path.read_text().index('"a"') < path.read_text().index('"b"')  # sorted keys by default
    assert [p.name for p in tmp_path.iterdir()] == ["summary.json"]


def test_a_failed_write_keeps_the_old_file(tmp_path):
    path = tmp_path / "report.md"
    path.write_text("old")
    with pytest.raises(UnicodeEncodeError):
        write_text_atomic(path, "half \ud800 written")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]


def test_concurrent_writers_of_one_path_never_mix(tmp_path):
    path = tmp_path / "status.json"
    texts = [f"{i}" * 10_000 for i in range(8)]
    threads = [threading.Thread(target=lambda t=t: [write_text_atomic(path, t) for _ in range(20)]) for t in texts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert path.read_text() in texts
    assert [p.name for p in tmp_path.iterdir()] == ["status.json"]
