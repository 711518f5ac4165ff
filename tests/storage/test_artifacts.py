"""Artifacts go to a local path (atomically, folders created) or any fsspec URL."""

import fsspec
import pytest

from posttrain.errors import PosttrainError
from posttrain.storage.artifacts import read_artifact, write_artifact


def test_local_and_fsspec_urls_round_trip(tmp_path):
    local = tmp_path / "a" / "b" / "page.html"
    assert write_artifact(str(local), "<p>hi</p>") == str(local)
    assert local.read_text() == "<p>hi</p>" and [p.name for p in local.parent.iterdir()] == ["page.html"]
    assert read_artifact(f"file://{local}") == b"<p>hi</p>"
    write_artifact("memory://artifacts/scene.glb", b"glTF\x02")
    with fsspec.open("memory://artifacts/scene.glb", "rb") as handle:
        assert handle.read() == b"glTF\x02"
    assert read_artifact("memory://artifacts/scene.glb") == b"glTF\x02"


def test_failures_name_the_url(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(PosttrainError, match=r"file/x.html: cannot write the artifact"):
        write_artifact(str(tmp_path / "file" / "x.html"), "x")
    with pytest.raises(PosttrainError, match="memory://absent/x: cannot read the artifact"):
        read_artifact("memory://absent/x")
