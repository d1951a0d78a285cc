"""Memory systems and what they run on: the contract, the registry, the op runtime, the memory store, prompt files.

Write a system as a `MemorySystem` subclass that declares its operations, register it with
``@memory_system("name")`` (and, from an installed package, an entry point in the
``memopt.memory_systems`` group), and build it by name with `make_system`. See docs/own-system.md
("Bring your own memory system") and `memopt.systems.base` for the contract.

What it may import: `memopt.core`, `memopt.registry`, `memopt.taxonomy`, `memopt.data` and `memopt.lm`; the tracer
(`memopt.trace`) listens to its events, so nothing here imports tracing.

- `base`: `MemorySystem` and `OpSpec`, the contract; `registry`: ``@memory_system``, `make_system`;
- `ops`: how one operation runs (`run_op`, `produce`: announced, scoped, interceptable); `events`: the store, op
  and variable events and their context-scoped listeners;
- `store`: `MemoryStore`, the versioned SQLite memory store with bm25s search and as-of views;
- `prompts`: prompt files (``prompts/<pipeline>/<operation>.md``); `helpers`: what the shipped systems share.
"""

from memopt.core.lazy import lazy_names
from memopt.systems.base import MemorySystem, OpSpec, clear_ingest_cache
from memopt.systems.registry import (
    GROUP,
    clash,
    discover,
    make_system,
    memory_system,
    system_class,
    system_names,
    system_source,
    validate_system,
)

__all__ = [
    "MemoryStore",
    "produce",
    "run_op",
    "GROUP",
    "MemorySystem",
    "OpSpec",
    "clash",
    "clear_ingest_cache",
    "discover",
    "make_system",
    "memory_system",
    "system_class",
    "system_names",
    "system_source",
    "validate_system",
]

_HOME = {"MemoryStore": "memopt.systems.store", "produce": "memopt.systems.ops", "run_op": "memopt.systems.ops"}

__getattr__ = lazy_names("memopt.systems", _HOME, globals())
