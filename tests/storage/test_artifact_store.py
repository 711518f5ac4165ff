"""The artifact store against a real S3-compatible server: a checkpoint counts only once its
manifest is there, downloads are checked against it, retiring removes the manifest first."""

import boto3
import pytest

from posttrain.errors import StorageError
from posttrain.storage.artifact_store import ArtifactStore


def write_checkpoint(directory, content: bytes):
    (directory / "shards").mkdir(parents=True)
    (directory / "model.safetensors").write_bytes(content)
    (directory / "shards" / "__0_0.distcp").write_bytes(content * 2)
    return directory


def test_a_checkpoint_is_published_whole_or_not_at_all(tmp_path, s3_bucket):
    store = ArtifactStore(f"s3://{s3_bucket}/runs/a")
    store.publish_checkpoint(write_checkpoint(tmp_path / "step-1", b"one"), "checkpoints/step-1")
    # step 2's files are up, its manifest is not: what a kill between the two leaves behind
    half = write_checkpoint(tmp_path / "step-2", b"two")
    for file in ("model.safetensors", "shards/__0_0.distcp"):
        store.put_file(half / file, f"checkpoints/step-2/{file}")
    assert store.published_steps() == [1]

    store.fetch_checkpoint("checkpoints/step-1", tmp_path / "fetched")
    assert (tmp_path / "fetched" / "shards" / "__0_0.distcp").read_bytes() == b"oneone"

    # an object that does not match its manifest is refused
    boto3.client("s3").put_object(Bucket=s3_bucket, Key="runs/a/checkpoints/step-1/model.safetensors", Body=b"x")
    with pytest.raises(StorageError, match="manifest says 3"):
        store.fetch_checkpoint("checkpoints/step-1", tmp_path / "again")

    store.retire_checkpoint("checkpoints/step-1")
    assert store.published_steps() == []
    assert not store.exists("checkpoints/step-1/model.safetensors")


def test_an_unknown_protocol_is_one_clear_error():
    with pytest.raises(StorageError, match="nosuch://x"):
        ArtifactStore("nosuch://x/runs")
