"""Artifacts (rendered pages, exported models) written to a local path or any fsspec URL.

    write_artifact("runs/scene/scene.html", html)          # a local file, written atomically
    write_artifact("s3://bucket/scenes/scene.glb", glb)    # object storage, through fsspec
    write_artifact("memory://scenes/scene.html", html)     # fsspec's in-memory file system

A URL's scheme picks the fsspec file system (s3 needs s3fs installed, gs gcsfs, ...); a plain
path or file:// is the local disk, parent folders created."""

from __future__ import annotations

from pathlib import Path

from posttrain.errors import PosttrainError
from posttrain.storage.atomic import write_bytes_atomic


def is_local(url: str) -> bool:
    return "://" not in url or url.startswith("file://")


def write_artifact(url: str, data: bytes | str) -> str:
    """Write `data` to `url` whole; returns the url. A failure names the url and the reason."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        if is_local(url):
            path = Path(url.removeprefix("file://"))
            path.parent.mkdir(parents=True, exist_ok=True)
            write_bytes_atomic(path, payload)
        else:
            import fsspec

            with fsspec.open(url, "wb", auto_mkdir=True) as handle:
                handle.write(payload)
    except (OSError, ValueError, ImportError) as exc:
        raise PosttrainError(f"{url}: cannot write the artifact ({exc})") from exc
    return url


def read_artifact(url: str) -> bytes:
    try:
        if is_local(url):
            return Path(url.removeprefix("file://")).read_bytes()
        import fsspec

        with fsspec.open(url, "rb") as handle:
            return handle.read()
    except (OSError, ValueError, ImportError) as exc:
        raise PosttrainError(f"{url}: cannot read the artifact ({exc})") from exc
