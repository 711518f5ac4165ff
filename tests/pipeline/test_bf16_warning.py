"""A bf16 setting on a CPU that emulates bf16 is warned about before the run starts."""

import os
import subprocess
import sys

from tests.test_cpu import AVX2_ONLY

SCRIPT = """
from posttrain.config import parse_config
from posttrain.pipeline.build import warn_if_bf16_is_emulated
config = parse_config({"model": {"name": "tiny-llama", "dtype": "bfloat16"}, "optim": {"bf16_autocast": True},
                       "domains": [{"name": "a", "source": "reasoning-gym:basic_arithmetic"}]}, "run.toml")
warn_if_bf16_is_emulated(config)
"""


def test_bf16_settings_are_named_in_a_warning_with_avx2_kernels():
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **AVX2_ONLY, "COLUMNS": "300"},
    )
    assert result.returncode == 0, result.stderr
    assert "warning: [optim] bf16_autocast: bf16 is emulated on this CPU" in result.stderr
    assert 'warning: [model] dtype = "bfloat16": bf16 is emulated' in result.stderr
    assert "fp32 will be much faster here" in result.stderr


SFT_AUTO = """
from posttrain.cpu import bf16_is_fast
from posttrain.pipeline.sft.stage import sft_bf16_autocast
print(sft_bf16_autocast("auto", "cpu"), bf16_is_fast(), sft_bf16_autocast("auto", "cuda:0"),
      sft_bf16_autocast(True, "cpu"), sft_bf16_autocast(False, "cuda"))
"""


def test_the_warm_starts_bf16_autocast_is_on_only_where_bf16_is_fast():
    emulated = subprocess.run(
        [sys.executable, "-c", SFT_AUTO], capture_output=True, text=True, timeout=300, env={**os.environ, **AVX2_ONLY}
    )
    assert emulated.returncode == 0, emulated.stderr
    assert emulated.stdout.split() == ["False", "False", "True", "True", "False"]
    native = subprocess.run([sys.executable, "-c", SFT_AUTO], capture_output=True, text=True, timeout=300)
    auto, fast, *_ = native.stdout.split()
    assert auto == fast  # on this machine's own kernels: whatever the probe found
