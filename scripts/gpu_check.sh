#!/usr/bin/env bash
# The trainer on a GPU in one prepared check (benchmarks/gpu_check.py says what it checks):
# bf16 on CUDA against fp32 on the CPU, the hf engine on CUDA, a 1-rank NCCL step, tokens/s.
# Needs python3 with torch and transformers only; downloads nothing; sized to fit in 10 minutes
# on one GPU (not yet run on one). Writes benchmarks/results/gpu_check.json; exits 1 when a check
# fails, 2 when --device cuda finds no GPU.
#
#   scripts/gpu_check.sh                          # on a machine with an NVIDIA GPU
#   scripts/gpu_check.sh --device cpu --tiny      # dry run on the CPU (what the tests run)
#   PYTHON=/path/to/python scripts/gpu_check.sh   # another interpreter
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
exec "${PYTHON:-python3}" benchmarks/gpu_check.py "$@"
