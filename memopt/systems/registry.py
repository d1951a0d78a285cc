"""The registry of memory systems: ``@memory_system("name")``, discovery by entry point, build by name.

A memory system is a `MemorySystem` subclass registered under a name, in one of two ways:

- in code, with the decorator: ``@memory_system("my_memory") class MyMemory(MemorySystem)``;
- by an installed package, with an entry point in the ``memopt.memory_systems`` group whose name is
  the system's name and whose value is its class
  (``my_memory = "my_package.memory:MyMemory"``). memopt's own four
  systems are declared this way in memopt's ``pyproject.toml``, so they are found exactly as a
  plug-in is, and nothing in ``memopt`` imports ``pipelines``.

It is one `memopt.registry.Registry` like every pluggable kind's (``systems``), with the declaration checks
below as its adoption rule. Entry points are listed on the first lookup and loaded only when their system is
asked for, so ``memopt --help`` stays fast and a broken plug-in (one that raises, or calls ``sys.exit``, while
it is imported) fails with one `PluginError` naming its entry point when it is used, never breaking the other
systems. A plug-in cannot take a shipped system's name: when another distribution declares a name memopt
ships, memopt's own system keeps it and the plug-in's entry point is refused (one warning naming both
distributions when the name is used; `memopt systems` lists the clash and exits 2). When two plug-ins declare
the same name, neither is chosen: using the name is a `PluginError` naming both. Registration validates the
declarations (`validate_system`): an unknown stage, a steering op or knob the system lacks, an LLM op without
a signature, ... each a `PluginError` naming the system and the op.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import dspy

from memopt.core.errors import PluginError
from memopt.registry import Registry, entry_point_where
from memopt.systems.base import MemorySystem, OpSpec
from memopt.taxonomy import STAGES

__all__ = ["GROUP", "memory_system", "system_class", "make_system", "system_names", "system_source",
           "validate_system", "discover", "clash", "systems"]

GROUP = "memopt.memory_systems"
S = TypeVar("S", bound=type[MemorySystem])

_INSTANCE_ATTRS = frozenset({"knobs", "prompts_dir", "callbacks", "history"})


def _qualname(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _adopt(name: str, obj: object) -> type[MemorySystem]:
    """A class registered as ``name``: a `MemorySystem` subclass whose declarations pass `validate_system`."""
    if not (isinstance(obj, type) and issubclass(obj, MemorySystem)):
        raise PluginError(f"memory system {name!r}: {obj!r} is not a MemorySystem subclass.")
    declared = obj.__dict__.get("name")
    if declared not in (None, "", name):
        raise PluginError(f"memory system {_qualname(obj)} sets name = {declared!r} but is registered as "
                          f"{name!r}; drop the name attribute (the registration sets it).")
    obj.name = name
    validate_system(obj)
    return obj


systems: Registry[type[MemorySystem]] = Registry("memory system", GROUP, None, _adopt, unknown_hint="pipeline")


def memory_system(name: str) -> Callable[[S], S]:
    """Class decorator: validate a `MemorySystem` subclass and register it under ``name``."""

    def register(cls: S) -> S:
        ep = systems.entry_point(name) if isinstance(name, str) else None
        if ep is not None and ep.value.replace(" ", "") != f"{cls.__module__}:{cls.__qualname__}":
            raise PluginError(f"memory system {name!r} is registered twice: by {_qualname(cls)} and by "
                              f"{entry_point_where(ep, GROUP)}; rename one.")
        existing = systems.registered(name) if isinstance(name, str) else None
        if existing is not None and existing is not cls and _qualname(existing) != _qualname(cls):
            raise PluginError(f"memory system {name!r} is registered twice: by {_qualname(existing)} and by "
                              f"{_qualname(cls)}; rename one.")
        return systems.register(name, cls, module=cls.__module__)  # type: ignore[return-value]

    return register


def _spec_problem(spec: Any, seen: set[str]) -> str | None:
    if not isinstance(spec, OpSpec):
        return f"operations holds {spec!r}, not an OpSpec"
    op = f"op {spec.name!r}"
    if not (isinstance(spec.name, str) and spec.name.isidentifier()):
        return f"{op}: the op name must be a Python identifier"
    if spec.name in seen:
        return f"{op} is declared twice"
    if spec.kind not in ("llm", "tool"):
        return f"{op}: kind {spec.kind!r}; use 'llm' or 'tool'"
    if spec.phase not in ("ingest", "query"):
        return f"{op}: phase {spec.phase!r}; use 'ingest' or 'query'"
    if not spec.stages:
        return f"{op} declares no stage; give stages= one or more of {', '.join(STAGES)}"
    unknown = [s for s in spec.stages if s not in STAGES]
    if unknown:
        return f"{op}: unknown stage {unknown[0]!r}; the stages are {', '.join(STAGES)}"
    if spec.is_llm:
        if not (isinstance(spec.signature, type) and issubclass(spec.signature, dspy.Signature)):
            return f"{op} is an LLM op without a dspy.Signature (signature={spec.signature!r})"
        if hasattr(MemorySystem, spec.name) or spec.name in _INSTANCE_ATTRS:
            return f"{op}: an LLM op becomes an attribute of the system, and {spec.name!r} is taken by MemorySystem"
    elif spec.signature is not None:
        return f"{op} is a tool op but has a signature; only LLM ops have one"
    return None


def validate_system(cls: type[MemorySystem]) -> None:
    """Check a system's declarations (ops, stages, steering, knobs); a `PluginError` names the system and op."""
    where = f"memory system {getattr(cls, 'name', '')!r} ({_qualname(cls)})"
    if not (isinstance(cls, type) and issubclass(cls, MemorySystem)):
        raise PluginError(f"{where}: not a subclass of memopt.systems.MemorySystem.")
    seen: set[str] = set()
    for spec in cls.operations:
        problem = _spec_problem(spec, seen)
        if problem:
            raise PluginError(f"{where}: {problem}.")
        seen.add(spec.name)
    if not any("response" in spec.stages for spec in cls.operations):
        raise PluginError(f"{where}: no op of stage 'response' (the op that writes the answer); declare one.")
    bad_knobs = [k for k, v in cls.defaults.items() if not (k.isidentifier() and isinstance(v, int))]
    if bad_knobs:
        raise PluginError(f"{where}: knob {bad_knobs[0]!r}: knobs are identifiers with integer defaults.")
    clash = sorted(set(cls.defaults) & seen)
    if clash:
        raise PluginError(f"{where}: {clash[0]!r} is both an op and a knob; rename one.")
    missing = [k for k in cls.ingest_knobs if k not in cls.defaults]
    if missing:
        raise PluginError(f"{where}: ingest_knobs names {missing[0]!r}, which is not a knob (defaults).")
    for spec in cls.operations:
        for steer in spec.steered_by:
            if steer == spec.name or (steer not in seen and steer not in cls.defaults):
                raise PluginError(
                    f"{where}: op {spec.name!r} is steered by {steer!r}, which is "
                    + ("the op itself" if steer == spec.name else "neither an op nor a knob of the system")
                    + f" (ops: {', '.join(sorted(seen))}; knobs: {', '.join(sorted(cls.defaults)) or 'none'}).")


def clash(name: str) -> str | None:
    """Why other distributions' entry points for ``name`` are refused (None when no two declare it)."""
    return systems.clash(name)


def discover() -> list[str]:
    """Read the installed entry points again (after installing a plug-in into a running process); the names."""
    systems.discover()
    return system_names()


def system_names() -> list[str]:
    """Every known memory system (registered in this process or installed by entry point), sorted."""
    return sorted(systems.names())


def system_class(name: str) -> type[MemorySystem]:
    """The `MemorySystem` class registered under ``name`` (loading its plug-in on first use)."""
    return systems.get(name)


def system_source(name: str) -> str:
    """Where a system comes from: its entry point's distribution and value, or the class that registered it."""
    return systems.source(name)


def make_system(name: str, *, prompts: str | Path | None = None, instructions: dict[str, str] | None = None,
                **knobs: int) -> MemorySystem:
    """Build the memory system ``name`` with prompts from ``prompts`` (default: its seed prompts)."""
    return system_class(name)(prompts=prompts, instructions=instructions, **knobs)
