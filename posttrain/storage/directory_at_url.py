"""`--out URL` for the commands that write a plain output directory (`posttrain eval`,
`posttrain inspect`): the command writes a working copy on this machine, filled first from the
URL (what an earlier run there wrote: an eval resumes from it), and the copy is published back
to the URL when the command ends, however it ends (Ctrl-C and errors included), so the next run
anywhere resumes from it. Training runs publish checkpoints whole instead
(posttrain.pipeline.run_mirror, posttrain.pipeline.run_at_url).

Working copies live under $POSTTRAIN_CACHE (~/.cache/posttrain): KIND/NAME-HASH, NAME the
URL's last part and HASH 12 hex digits of the URL's SHA-256."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from posttrain.cache import cache_dir
from posttrain.storage.artifact_store import ArtifactStore


def is_url(out: str) -> bool:
    """An --out that names object storage (file:// is a local directory, as a plain path)."""
    return "://" in out and not out.startswith("file://")


def local_out(out: str) -> Path:
    return Path(out.removeprefix("file://"))


def working_copy(url: str, kind: str) -> Path:
    url = url.rstrip("/")
    name = url.rsplit("/", 1)[-1] or kind
    return cache_dir() / kind / f"{name}-{hashlib.sha256(url.encode()).hexdigest()[:12]}"


class DirectoryAtUrl:
    def __init__(self, url: str, kind: str = "outputs") -> None:
        self.url = url
        self.store = ArtifactStore(url)
        self.local = working_copy(url, kind)

    def fetch(self) -> int:
        """Clear the working copy and download every file at the URL into it -> how many."""
        shutil.rmtree(self.local, ignore_errors=True)
        self.local.mkdir(parents=True, exist_ok=True)
        names = self.store.relative_files()
        for name in names:
            self.store.get_file(name, self.local / name)
        return len(names)

    def publish(self) -> int:
        """Upload every file of the working copy -> how many."""
        files = sorted(p for p in self.local.rglob("*") if p.is_file()) if self.local.is_dir() else []
        for file in files:
            self.store.put_file(file, file.relative_to(self.local).as_posix())
        return len(files)


@contextmanager
def output_directory(out: str, fetch: bool, say: Callable[[str], None]) -> Iterator[Path]:
    """The local directory a command writes for `--out out`: `out` itself, or for a URL its
    working copy: filled from the URL first (`fetch`; else cleared) and published back however
    the command ends."""
    if not is_url(out):
        yield local_out(out)
        return
    remote = DirectoryAtUrl(out)
    if fetch:
        count = remote.fetch()
        say(f"working copy of {out}: {remote.local}" + (f" ({count} files fetched from it)" if count else ""))
    else:
        shutil.rmtree(remote.local, ignore_errors=True)
        say(f"working copy of {out}: {remote.local}")
    try:
        yield remote.local
    finally:
        say(f"published {remote.publish()} files to {out}")
