"""Import paths of modules that moved into folders (memopt 0.2): the old path still imports, with a FutureWarning.

``import memopt.store`` gives a module that hands every name on to `memopt.systems.store` (the same objects), and
warns once where it was imported from. Only what was a module of its own is listed; names of a folder's face
(``from memopt.feedback import Feedback``) never moved.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType
from typing import Any

__all__ = ["MOVED", "install"]

MOVED = {
    "memopt.errors": "memopt.core.errors",
    "memopt.text": "memopt.core.text",
    "memopt.files": "memopt.core.files",
    "memopt.parallel": "memopt.core.parallel",
    "memopt.interrupts": "memopt.core.interrupts",
    "memopt.progress": "memopt.core.progress",
    "memopt.stats": "memopt.core.stats",
    "memopt.lazy": "memopt.core.lazy",
    "memopt.metrics": "memopt.judge.metrics",
    "memopt.judge_rules": "memopt.judge.rules",
    "memopt.events": "memopt.systems.events",
    "memopt.ops": "memopt.systems.ops",
    "memopt.store": "memopt.systems.store",
    "memopt.prompts": "memopt.systems.prompts",
    "memopt.pipeline_run": "memopt.evaluate.pipeline",
    "memopt.feedback_formats": "memopt.feedback.formats",
    "memopt.feedback_kinds": "memopt.feedback.kinds",
    "memopt.export_knobs": "memopt.export.knobs",
    "memopt.prompt_check": "memopt.export.check",
    "memopt.mem0_check": "memopt.export.mem0_check",
    "memopt.experiment": "memopt.optimize.experiment",
    "memopt.run_events": "memopt.optimize.events",
    "memopt.lm.edits": "memopt.simlm.edits",
}


class _Alias(importlib.abc.Loader):
    """Loads an old path as a module that forwards every attribute to the module's new home."""

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        new = MOVED[module.__name__]
        warnings.warn(f"{module.__name__} moved to {new}: import it from there (the old path will be removed).",
                      FutureWarning, stacklevel=_caller_level())
        home = importlib.import_module(new)

        def __getattr__(name: str) -> Any:
            return getattr(home, name)

        module.__getattr__ = __getattr__  # type: ignore[method-assign]
        module.__doc__ = home.__doc__
        module.__all__ = list(getattr(home, "__all__", []))  # type: ignore[attr-defined]


def _caller_level() -> int:
    """The stack level of the first frame outside the import machinery (where the old path was written)."""
    frame, level = sys._getframe(2), 3
    while frame is not None and frame.f_code.co_filename.startswith("<frozen importlib"):
        frame, level = frame.f_back, level + 1
    return level


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias())


def install() -> None:
    """Put the finder of moved paths on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())
