"""The artifact store against a real S3-compatible server: a checkpoint counts only once its
manifest is there, downloads are checked against it, retiring removes the manifest first."""

import boto3
import pytest
import torch

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


def test_a_newer_pipeline_state_joins_a_published_checkpoint_manifest_last(tmp_path, s3_bucket):
    """A preemption notice at a step whose checkpoint exists adds pipeline_state-K.pt: uploaded
    first, listed by the rewritten manifest after; the newest is what a resume loads."""
    from posttrain.train.checkpoint import load_pipeline_state, save_pipeline_state

    store = ArtifactStore(f"s3://{s3_bucket}/runs/b")
    step = write_checkpoint(tmp_path / "step-4", b"four")
    torch.save({"buffer": []}, step / "pipeline_state.pt")
    store.publish_checkpoint(step, "checkpoints/step-4")
    first = save_pipeline_state(step, {"buffer": ["a"]})
    store.put_file(first, f"checkpoints/step-4/{first.name}")  # a kill before the manifest: not listed
    store.fetch_checkpoint("checkpoints/step-4", tmp_path / "before")
    assert load_pipeline_state(tmp_path / "before") == {"buffer": []}

    store.add_to_checkpoint(first, "checkpoints/step-4")
    second = save_pipeline_state(step, {"buffer": ["a", "b"]})
    store.add_to_checkpoint(second, "checkpoints/step-4")
    assert (first.name, second.name) == ("pipeline_state-1.pt", "pipeline_state-2.pt")
    store.fetch_checkpoint("checkpoints/step-4", tmp_path / "after")
    assert load_pipeline_state(tmp_path / "after") == {"buffer": ["a", "b"]}
    assert store.published_steps() == [4]
