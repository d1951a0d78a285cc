"""Names a package exports but loads on first use (its modules import heavy libraries): one `__getattr__` for all."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(package: str, home: dict[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: each name of ``home`` is loaded from its module on first use and kept
    in ``namespace`` (the package's globals), so later lookups are plain attribute reads."""

    def __getattr__(name: str) -> Any:
        if name not in home:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home[name]), name)
        namespace[name] = value
        return value

    return __getattr__
