"""Optimizers: rewrite the prompts of the blamed operations, round after round.

Optimizers are registered by name (`memopt.optimize.registry`: ``@optimizer("name")``, the
``memopt.optimizers`` entry points); memopt's own are ``memtrace``, ``score_only`` and ``gepa``
(`memopt.optimize.optimizers`). The names below load on first use, so reading the registry imports no DSPy.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["OptimizeState", "ReflectiveOptimizer", "RoundRecord"]

_HOME = {"ReflectiveOptimizer": "memopt.optimize.reflective", "OptimizeState": "memopt.optimize.state",
         "RoundRecord": "memopt.optimize.state"}


def __getattr__(name: str) -> Any:
    """Load a name from its module on first use."""
    if name not in _HOME:
        raise AttributeError(f"module 'memopt.optimize' has no attribute {name!r}")
    return getattr(importlib.import_module(_HOME[name]), name)
