"""A run directory's copy at any fsspec URL (s3://bucket/runs/NAME, gs://..., file:///...):
the run writes locally and publishes here; a machine that has never seen the run fetches from
here to resume it.

Checkpoints are published whole or not at all: every file of checkpoints/step-N/ is uploaded
first, its MANIFEST.json (each file's size) last, and readers only believe manifests, so a
reader never sees half a checkpoint. A file added to a published checkpoint later (a newer
pipeline state on a preemption notice) is uploaded before the manifest that lists it. Retiring
an old checkpoint deletes its manifest first.

Credentials and endpoints come from the environment, as the storage's own client reads them:
for S3 and S3-compatible servers AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_ENDPOINT_URL.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import fsspec

from posttrain.errors import StorageError

MANIFEST = "MANIFEST.json"
_STEP = re.compile(r"step-(\d+)$")


class ArtifactStore:
    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")
        try:
            self.fs, self.root = fsspec.core.url_to_fs(self.url)
        except (ImportError, ValueError) as exc:  # an unknown protocol, or its package missing (s3fs)
            raise StorageError(f"{url}: {exc}") from None

    def _path(self, relative: str) -> str:
        return f"{self.root}/{relative}" if relative else self.root

    def put_file(self, local: Path, relative: str) -> None:
        self.fs.put_file(str(local), self._path(relative))

    def get_file(self, relative: str, local: Path) -> None:
        local.parent.mkdir(parents=True, exist_ok=True)
        self.fs.get_file(self._path(relative), str(local))

    def relative_files(self) -> list[str]:
        """Every file under the URL, as paths relative to it (none when nothing is there)."""
        self.fs.invalidate_cache()
        try:
            found = self.fs.find(self.root)
        except FileNotFoundError:
            return []
        root = self.root.rstrip("/") + "/"
        return sorted(path[len(root) :] for path in found if path.startswith(root))

    def exists(self, relative: str) -> bool:
        return self.fs.exists(self._path(relative))

    def publish_checkpoint(self, local: Path, relative: str) -> None:
        """Upload the directory `local` to `relative`, its manifest last."""
        files = sorted(p for p in local.rglob("*") if p.is_file())
        for file in files:
            self.put_file(file, f"{relative}/{file.relative_to(local).as_posix()}")
        manifest = {file.relative_to(local).as_posix(): file.stat().st_size for file in files}
        self.fs.pipe_file(self._path(f"{relative}/{MANIFEST}"), json.dumps(manifest, indent=1).encode())

    def add_to_checkpoint(self, local: Path, relative: str) -> None:
        """Add the new file `local` to the published checkpoint `relative`: the file first, then
        the manifest rewritten in one write. A reader sees the checkpoint before or after, whole."""
        manifest = json.loads(self.fs.cat_file(self._path(f"{relative}/{MANIFEST}")))
        self.put_file(local, f"{relative}/{local.name}")
        manifest[local.name] = local.stat().st_size
        self.fs.pipe_file(self._path(f"{relative}/{MANIFEST}"), json.dumps(manifest, indent=1).encode())

    def published_steps(self, checkpoints: str = "checkpoints") -> list[int]:
        """The steps whose checkpoint is complete (has its manifest), ascending."""
        self.fs.invalidate_cache()  # another machine may have published since this process listed
        try:
            entries = self.fs.ls(self._path(checkpoints), detail=False)
        except FileNotFoundError:
            return []
        steps = []
        for entry in entries:
            match = _STEP.search(entry.rstrip("/"))
            if match and self.fs.exists(f"{entry.rstrip('/')}/{MANIFEST}"):
                steps.append(int(match.group(1)))
        return sorted(steps)

    def fetch_checkpoint(self, relative: str, local: Path) -> None:
        """Download a published checkpoint into `local`, checking each file against its manifest."""
        manifest = json.loads(self.fs.cat_file(self._path(f"{relative}/{MANIFEST}")))
        for name, size in manifest.items():
            target = local / name
            self.get_file(f"{relative}/{name}", target)
            if target.stat().st_size != size:
                raise StorageError(f"{self.url}/{relative}/{name}: {target.stat().st_size} bytes, manifest says {size}")

    def retire_checkpoint(self, relative: str) -> None:
        """Delete a published checkpoint: its manifest first, so it stops counting at once."""
        self.fs.rm_file(self._path(f"{relative}/{MANIFEST}"))
        self.fs.rm(self._path(relative), recursive=True)
