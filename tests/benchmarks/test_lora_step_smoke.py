"""The LoRA step benchmark, end to end on the tiny model: both variants measured side by side."""

from tests.benchmarks.scripts import run_script


def test_tiny_end_to_end(tmp_path):
    args = ["--model", "tiny-llama", "--prompts", "1", "--group-size", "2", "--completion-tokens", "8"]
    report = run_script("lora_step", [*args, "--rounds", "1", "--steps", "1", "--warmup", "0"], tmp_path / "out.json")
    full, lora = report["full"], report["lora"]
    assert full["step_s"] > 0 and lora["step_s"] > 0 and full["peak_rss_mb"] > 0
    assert lora["trainable_params"] < full["trainable_params"] == full["params"]
    assert lora["trainer_state_mb"] < full["trainer_state_mb"]  # no gradients or Adam state for frozen weights
    assert report["lora_over_full"]["step_s"] == lora["step_s"] / full["step_s"]
    assert report["cpu"]["model_name"]
