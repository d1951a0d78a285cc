"""Memory systems written as DSPy modules, one file each, and their registry.

>>> sorted(PIPELINES)
['evermemos', 'long_context', 'mem0', 'rag']
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING

from memopt.errors import ConfigError

if TYPE_CHECKING:
    from memopt.system import MemorySystem

__all__ = ["PIPELINES", "pipeline_class", "make_system"]

PIPELINES: dict[str, str] = {
    "long_context": "pipelines.long_context:LongContext",
    "rag": "pipelines.rag:RAG",
    "mem0": "pipelines.mem0:Mem0",
    "evermemos": "pipelines.evermemos:EverMemOS",
}


def pipeline_class(name: str) -> type[MemorySystem]:
    """The `MemorySystem` class registered under ``name``."""
    if name not in PIPELINES:
        raise ConfigError(f"unknown pipeline {name!r}; choose one of {', '.join(sorted(PIPELINES))}.")
    module, _, cls = PIPELINES[name].partition(":")
    return getattr(importlib.import_module(module), cls)


def make_system(name: str, *, prompts: str | Path | None = None, **knobs: int) -> MemorySystem:
    """Build the memory system ``name`` with prompts from ``prompts`` (default: the seed prompts)."""
    return pipeline_class(name)(prompts=prompts, **knobs)
