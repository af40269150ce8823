"""Modules that can be called like their main function.

``o3viz.capture`` and ``o3viz.solve`` are both a submodule and the public function of the same name.
Once the submodule is imported, Python binds the package attribute to the module, so the module
class is swapped for one whose ``__call__`` forwards to the function: ``o3viz.capture(...)`` works
in either case.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any


def make_callable(module_name: str, fn: Callable[..., Any]) -> None:
    class _CallableModule(types.ModuleType):
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return fn(*args, **kwargs)

    sys.modules[module_name].__class__ = _CallableModule
