"""The LoRA step benchmark's measurement, on the tiny model: both variants in this process (the
script runs each in its own process only so that its peak RSS is its own)."""

import argparse

from tests.benchmarks.scripts import load_script


def test_both_variants_measure_a_step_and_lora_keeps_less_state():
    bench = load_script("lora_step")
    shape = dict(model="tiny-llama", prompts=1, group_size=2, completion_tokens=8, micro_batch_tokens=2048)
    common = argparse.Namespace(**shape, rank=4, steps=1, warmup=0, threads=1)
    full = bench.run_variant(argparse.Namespace(**vars(common), variant="full"))
    lora = bench.run_variant(argparse.Namespace(**vars(common), variant="lora"))
    assert full["step_s"][0] > 0 and lora["step_s"][0] > 0 and full["peak_rss_mb"] > 0
    assert lora["trainable_params"] < full["trainable_params"] == full["params"]
    # no gradients or AdamW moments for the frozen weights: about a quarter of the full state
    assert lora["trainer_state_mb"] < 0.3 * full["trainer_state_mb"]
    assert full["train_tokens"] == lora["train_tokens"] > 0
