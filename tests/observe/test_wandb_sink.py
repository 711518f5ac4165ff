"""`[logging] report_to = ["wandb"]`: the run's offline W&B file, read back record by record and
decoded with W&B's own protobuf messages, holds the run config and the values of metrics.jsonl.

wandb 0.31 ships no Python reader for its .wandb files (the old `datastore` module is gone), so
the framing (W&B's header, then LevelDB-log records with a CRC-32 each) is read here and every
record is parsed by `wandb.proto.wandb_internal_pb2.Record`."""

import json
import struct
import zlib

import pytest

wandb_internal_pb2 = pytest.importorskip("wandb.proto.wandb_internal_pb2")

BLOCK = 32768
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4


def wandb_records(path):
    data = path.read_bytes()
    assert data[:4] == b":W&B" and data[4:6] == b"\xe1\xbe", "not a .wandb file"
    position, pending = 7, b""
    while position + 7 <= len(data):
        left = BLOCK - position % BLOCK
        if left < 7:  # a block's tail too short for a header is padding
            position += left
            continue
        checksum, length, kind = struct.unpack("<IHB", data[position : position + 7])
        if length == 0 and kind == 0:
            position += left
            continue
        chunk = data[position + 7 : position + 7 + length]
        assert zlib.crc32(bytes([kind]) + chunk) == checksum, f"bad checksum at byte {position}"
        position += 7 + length
        if kind == FULL:
            yield _record(chunk)
        elif kind == FIRST:
            pending = chunk
        elif kind == MIDDLE:
            pending += chunk
        elif kind == LAST:
            yield _record(pending + chunk)


def _key(item):
    """W&B stores a key with a "/" (mixture/add/weight) as its parts, in nested_key."""
    return item.key or "/".join(item.nested_key)


def _record(raw):
    record = wandb_internal_pb2.Record()
    record.ParseFromString(raw)
    return record


def test_the_offline_wandb_run_holds_the_config_and_the_values_of_metrics_jsonl(sink_run):
    run_dir = sink_run
    [wandb_file] = (run_dir / "wandb").glob("offline-run-*/run-*.wandb")
    history, run = {}, None
    for record in wandb_records(wandb_file):
        kind = record.WhichOneof("record_type")
        if kind == "history":
            history[record.history.step.num] = {_key(item): json.loads(item.value_json) for item in record.history.item}
        elif kind == "run":
            run = record.run
    assert run.project == "posttrain" and run.display_name == run_dir.name
    config = {item.key: json.loads(item.value_json) for item in run.config.update}
    assert config["model"]["name"] == "tiny-llama" and config["train"]["steps"] == 2
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert sorted(history) == [r["step"] for r in records] == [1, 2]
    for record in records:
        logged = history[record["step"]]
        for key in ("loss", "grad_norm", "reward_mean", "logprob_mismatch_max", "mixture/add/weight"):
            assert logged[key] == pytest.approx(record[key], rel=1e-12), key
        assert "mode" not in logged and "task_ids" not in logged  # numbers only
