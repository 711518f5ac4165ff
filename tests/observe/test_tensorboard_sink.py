"""`[logging] report_to = ["tensorboard"]`: the run's event files, read back with TensorBoard's
own reader, hold the values of metrics.jsonl; a resumed run's redone steps replace the old."""

import json

import pytest

event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")


def scalars(directory) -> dict[str, dict[int, float]]:
    reader = event_accumulator.EventAccumulator(str(directory), size_guidance={event_accumulator.SCALARS: 0})
    reader.Reload()
    return {tag: {e.step: e.value for e in reader.Scalars(tag)} for tag in reader.Tags()["scalars"]}


def test_the_event_files_of_a_run_hold_the_values_of_metrics_jsonl(sink_run):
    records = [json.loads(line) for line in (sink_run / "metrics.jsonl").read_text().splitlines()]
    found = scalars(sink_run / "tensorboard")
    for key in ("loss", "grad_norm", "entropy", "kl", "reward_mean", "mixture/add/weight", "monitor/add/ci_high"):
        expected = {r["step"]: r[key] for r in records if key in r}
        assert expected and found[key] == pytest.approx(expected, rel=1e-6, abs=1e-7), key
    assert "step" not in found and "mode" not in found  # numbers only; the step is the x axis


def test_a_resumed_run_replaces_the_steps_it_redoes(tmp_path):
    from posttrain.observe.tensorboard_sink import TensorBoardSink

    first = TensorBoardSink(tmp_path)
    for step in (1, 2, 3):
        first.write({"step": step, "loss": float(step), "mode": "sync", "dynamic": True})
    first.close()
    resumed = TensorBoardSink(tmp_path, resume_after=1)  # a checkpoint at step 1: steps 2, 3 redone
    for step in (2, 3):
        resumed.write({"step": step, "loss": 10.0 * step})
    resumed.close()
    assert scalars(tmp_path) == {"loss": {1: 1.0, 2: 20.0, 3: 30.0}}
