"""posttrain.cpu: what the CPU is and whether bf16 is native, measured rather than assumed."""

import json
import os
import subprocess
import sys

from posttrain import cpu

# caps torch's and oneDNN's kernels (and MKL's) at AVX2, as on an AVX2-only EPYC: bf16 then runs
# element by element, as it does there
AVX2_ONLY = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_ENABLE_INSTRUCTIONS": "AVX2"}


def test_the_record_names_the_cpu_its_flags_and_torch_kernel_level():
    record = cpu.describe()
    assert record["model_name"] and record["vendor"] and record["cores"] >= 1
    assert set(record["flags"]) <= set(cpu.RELEVANT_FLAGS)
    assert record["torch_capability"] in ("DEFAULT", "AVX2", "AVX512", "ZVECTOR", "VSX")
    probe = record["bf16_matmul"]
    assert probe["gflops_fp32"] > 0 and probe["gflops_bf16"] > 0
    assert probe["fast"] == (probe["ratio"] >= cpu.BF16_FAST_RATIO)
    json.dumps(record)


def test_with_avx2_kernels_bf16_is_found_emulated_quickly():
    script = "import json; from posttrain import cpu; print(json.dumps(cpu.describe()))"
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env={**os.environ, **AVX2_ONLY}
    )
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert record["torch_capability"] == "AVX2"
    assert record["bf16_matmul"]["fast"] is False, record
    assert "bf16 is emulated on this CPU" not in result.stderr  # describing never warns


def test_a_bf16_setting_is_warned_about_only_where_bf16_is_emulated():
    message = cpu.slow_bf16_warning("[optim] bf16_autocast")
    assert (message is None) == cpu.bf16_is_fast()
    if message:
        assert message.startswith("[optim] bf16_autocast: bf16 is emulated on this CPU")
