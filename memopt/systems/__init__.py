"""Memory systems: the contract (`MemorySystem`, `OpSpec`), the registry, and helpers systems share.

Write a system as a `MemorySystem` subclass that declares its operations, register it with
``@memory_system("name")`` (and, from an installed package, an entry point in the
``memopt.memory_systems`` group), and build it by name with `make_system`. See docs/systems.md
("Bring your own memory system") and `memopt.systems.base` for the contract.
"""

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
