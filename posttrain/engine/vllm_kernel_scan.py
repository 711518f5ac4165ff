"""A guard around vLLM's CPU kernel overrides, which fail in a process that has imported numba.

On CPUs, vLLM 0.32 replaces some kernels when a worker starts (`triton_utils.dispatcher.
_rebind_kernels`): it scans every attribute of every module in `sys.modules` and reads
`vars(value).get("kernel")` from each object that has a `__dict__`. llvmlite's ffi library
object (imported with numba) answers any attribute through `__getattr__`, `__dict__` included,
with a wrapped C function that has no `.get`, and the scan stops with AttributeError, so an
in-process engine cannot be built once numba is loaded (a pytest process that imported
transformers' helpers, for example). The guard hides such attributes from their modules for
the length of the scan only and puts them back; nothing else changes.
"""

from __future__ import annotations

import functools
import importlib
import sys
from typing import Any


def _odd_namespace(value: Any) -> bool:
    """Whether vars(value) exists but is no mapping: what the scan cannot read."""
    try:
        return hasattr(value, "__dict__") and not hasattr(vars(value), "get")
    except Exception:  # an attribute that raises on inspection: the scan would skip it too
        return False


def _hide_odd_attributes() -> list[tuple[dict, str, Any]]:
    hidden = []
    for module in list(sys.modules.values()):
        namespace = getattr(module, "__dict__", None)
        if not isinstance(namespace, dict):
            continue
        for attr, value in list(namespace.items()):
            if _odd_namespace(value):
                hidden.append((namespace, attr, value))
                del namespace[attr]
    return hidden


def guard_kernel_rebinding() -> bool:
    """Wrap vLLM's kernel rebinding (once per process); False where this vLLM has none."""
    try:
        dispatcher = importlib.import_module("vllm.triton_utils.dispatcher")
    except ImportError:
        return False
    rebind = getattr(dispatcher, "_rebind_kernels", None)
    if rebind is None:
        return False
    if getattr(rebind, "_posttrain_guarded", False):
        return True

    @functools.wraps(rebind)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        hidden = _hide_odd_attributes()
        try:
            return rebind(*args, **kwargs)
        finally:
            for namespace, attr, value in hidden:
                namespace.setdefault(attr, value)

    guarded._posttrain_guarded = True  # type: ignore[attr-defined]
    dispatcher._rebind_kernels = guarded
    return True
