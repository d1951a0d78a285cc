"""Optimizers: rewrite the prompts of the blamed operations, round after round.

Optimizers are registered by name (`memopt.optimize.registry`: ``@optimizer("name")``, the
``memopt.optimizers`` entry points); memopt's own are ``memtrace``, ``score_only`` and ``gepa``
(`memopt.optimize.optimizers`). The names below load on first use, so reading the registry imports no DSPy.
"""

from __future__ import annotations

from memopt.lazy import lazy_names

__all__ = ["OptimizeState", "ReflectiveOptimizer", "RoundRecord"]

_HOME = {"ReflectiveOptimizer": "memopt.optimize.reflective", "OptimizeState": "memopt.optimize.state",
         "RoundRecord": "memopt.optimize.state"}


__getattr__ = lazy_names("memopt.optimize", _HOME, globals())
