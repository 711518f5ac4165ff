"""`import reasoning_gym` without loading cellpylib and matplotlib, which few generators use.

reasoning-gym registers every generator by importing every module of the package, and its
game_of_life generators import cellpylib at module level, which imports matplotlib.pyplot: on a
2-core AVX2 machine 1.1 s of the 4.3 s the import takes, paid by every process that builds or
scores a reasoning-gym task (a training run, each rollout worker).

They only use it inside their methods (`cpl.evolve2d(...)`), so until the package is imported a
stand-in takes cellpylib's place in sys.modules and imports the real one on its first
attribute access: only a process that generates or scores a game-of-life task pays for it.
(importlib's LazyLoader does not do here: the `import` statement itself reads the module's
__spec__, which makes it load.)
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType

DEFERRED = ("cellpylib",)


class _Deferred(ModuleType):
    """Stands in for a module until one of its attributes is read."""

    def __init__(self, name: str, spec) -> None:
        super().__init__(name)
        self.__spec__ = spec
        self._real: ModuleType | None = None

    def __getattr__(self, attribute: str):
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        if self._real is None:
            if sys.modules.get(self.__name__) is self:
                del sys.modules[self.__name__]
            self._real = importlib.import_module(self.__name__)
        return getattr(self._real, attribute)


def _defer(name: str) -> None:
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None:
        return  # not installed: reasoning-gym's own import reports it
    sys.modules[name] = _Deferred(name, spec)


def import_reasoning_gym() -> ModuleType:
    """The reasoning_gym package, its generators registered, cellpylib deferred."""
    if "reasoning_gym" not in sys.modules:
        for name in DEFERRED:
            _defer(name)
    import reasoning_gym

    return reasoning_gym
