"""A run directory mirrored to object storage (`[storage] url`): each checkpoint is published
when it is written (its files, then its manifest: posttrain.storage.artifact_store), together
with the run's files as of that step (config, metrics, trajectories, evaluations); the end of
the run publishes the rest (summary.json). `fetch_run` brings the run to a machine that has
never seen it, for --resume: its files and its latest complete checkpoint."""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path

from posttrain.errors import StorageError
from posttrain.pipeline.run_dir import RunDir
from posttrain.storage.artifact_store import MANIFEST, ArtifactStore


class RunMirror:
    def __init__(self, url: str, run_dir: RunDir) -> None:
        self.store, self.rd = ArtifactStore(url), run_dir

    def publish_checkpoint(self, step_dir: Path, keep: int) -> None:
        """The run's files first, then the checkpoint (manifest last): a reader that finds the
        checkpoint finds the records of every step it holds. Older ones past `keep` retire."""
        self.publish_run_files()
        self.store.publish_checkpoint(step_dir, f"checkpoints/{step_dir.name}")
        for step in self.store.published_steps()[:-keep]:
            self.store.retire_checkpoint(f"checkpoints/step-{step}")

    def publish_checkpoint_file(self, step_dir: Path, file: Path, keep: int) -> None:
        """`file`, new in the checkpoint `step_dir`, after the run's files; the whole checkpoint
        if it was never published (an earlier session stopped between writing and publishing)."""
        relative = f"checkpoints/{step_dir.name}"
        if not self.store.exists(f"{relative}/{MANIFEST}"):
            self.publish_checkpoint(step_dir, keep)
            return
        self.publish_run_files()
        self.store.add_to_checkpoint(file, relative)

    def publish_run_files(self) -> None:
        """Every top-level file of the run directory; a SQLite database as a consistent copy
        (its write-ahead log folded in), not the live file."""
        for file in sorted(p for p in self.rd.root.iterdir() if p.is_file()):
            if file.name.endswith(("-wal", "-shm")) or file.name.startswith("."):
                continue
            if file.suffix == ".sqlite":
                with tempfile.TemporaryDirectory() as tmp:
                    copy = Path(tmp) / file.name
                    _sqlite_snapshot(file, copy)
                    self.store.put_file(copy, file.name)
            else:
                self.store.put_file(file, file.name)


def fetch_run(url: str, local: Path) -> int | None:
    """Download the run at `url` into the empty or absent directory `local`: its top-level files
    and its latest complete checkpoint; returns that checkpoint's step (None: there is none)."""
    store = ArtifactStore(url)
    if not store.exists("config.toml"):
        raise StorageError(f"{url}: no run there (no config.toml)")
    local.mkdir(parents=True, exist_ok=True)
    for entry in store.fs.ls(store.root, detail=True):
        if entry["type"] == "file":
            name = entry["name"].rstrip("/").rsplit("/", 1)[-1]
            store.get_file(name, local / name)
    steps = store.published_steps()
    if not steps:
        return None
    store.fetch_checkpoint(f"checkpoints/step-{steps[-1]}", RunDir(local).checkpoints / f"step-{steps[-1]}")
    return steps[-1]


def _sqlite_snapshot(source: Path, target: Path) -> None:
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()
