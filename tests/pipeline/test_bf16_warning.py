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
