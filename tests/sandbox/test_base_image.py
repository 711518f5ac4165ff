"""Whether the host can stand in for a base image: no sandbox needed."""

import pytest

from posttrain.sandbox.base_image import HostInfo, stand_in

HOST = HostInfo("debian", "12", "bookworm", "Debian GNU/Linux 12 (bookworm)", "3.11")


@pytest.mark.parametrize(
    "image, note",
    [
        ("debian:bookworm-slim", None),
        ("debian:12", None),
        ("debian:bullseye", "package versions"),
        ("buildpack-deps:bookworm", None),
        ("ubuntu:22.04", "Ubuntu package names"),
        ("python:3.11-slim-bookworm", None),
        ("docker.io/library/python:3.13", "not 3.13"),
        ("ghcr.io/laude-institute/t-bench/python-3-13:20250620", "not 3.13"),
        ("ghcr.io/laude-institute/t-bench/ubuntu-24-04:latest", "not ubuntu-24"),
        ("ghcr.io/laude-institute/terminal-bench/base:latest", None),
    ],
)
def test_stand_in_images(image, note):
    result = stand_in(image, HOST)
    assert result.ok, result.reason
    version_notes = [n for n in result.notes if "pip install" not in n and "Terminal-Bench base image" not in n]
    if note is None:
        assert version_notes == []
    else:
        assert any(note in n for n in version_notes), result.notes
