"""The registry of memory systems: ``@memory_system("name")``, discovery by entry point, build by name.

A memory system is a `MemorySystem` subclass registered under a name, in one of two ways:

- in code, with the decorator: ``@memory_system("my_memory") class MyMemory(MemorySystem)``;
- by an installed package, with an entry point in the ``memopt.memory_systems`` group whose name is
  the system's name and whose value is its class
  (``my_memory = "my_package.memory:MyMemory"``). memopt's own four
  systems are declared this way in memopt's ``pyproject.toml``, so they are found exactly as a
  plug-in is, and nothing in ``memopt`` imports ``pipelines``.

Entry points are listed on the first lookup and loaded only when their system is asked for, so
``memopt --help`` stays fast and a broken plug-in (one that raises, or calls ``sys.exit``, while it is
imported) fails with one `PluginError` naming its entry point when it is used, never breaking the
other systems. A plug-in cannot take a shipped system's name: when another distribution declares a
name memopt ships, memopt's own system keeps it and the plug-in's entry point is refused (one warning
naming both distributions when the name is used; `memopt systems` lists the clash and exits 2). When
two plug-ins declare the same name, neither is chosen: using the name is a `PluginError` naming both.
Registration validates the declarations (`validate_system`): an unknown stage, a steering op or knob
the system lacks, an LLM op without a signature, ... each a `PluginError` naming the system and the op.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any, TypeVar

import dspy

from memopt.errors import ConfigError, PluginError
from memopt.registry import SHIPPED_BY, dist_name, entry_point_where, entry_points_by_name, load_entry_point
from memopt.systems.base import MemorySystem, OpSpec
from memopt.taxonomy import STAGES

__all__ = ["GROUP", "memory_system", "system_class", "make_system", "system_names", "system_source",
           "validate_system", "discover", "clash"]

GROUP = "memopt.memory_systems"
S = TypeVar("S", bound=type[MemorySystem])

_REGISTERED: dict[str, type[MemorySystem]] = {}
_LOCK = threading.RLock()
_INSTANCE_ATTRS = frozenset({"knobs", "prompts_dir", "callbacks", "history"})
_log = logging.getLogger(__name__)


def _qualname(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def memory_system(name: str) -> Callable[[S], S]:
    """Class decorator: validate a `MemorySystem` subclass and register it under ``name``."""

    def register(cls: S) -> S:
        if not (isinstance(name, str) and name.isidentifier()):
            raise PluginError(f"memory system name {name!r} ({_qualname(cls)}): use a Python identifier "
                              "(letters, digits, underscores), e.g. 'my_memory'.")
        declared = cls.__dict__.get("name")
        if declared not in (None, "", name):
            raise PluginError(f"memory system {_qualname(cls)} sets name = {declared!r} but is registered as "
                              f"{name!r}; drop the name attribute (the registration sets it).")
        cls.name = name
        validate_system(cls)
        ep = _entry_points().get(name)
        if ep is not None and ep.value.replace(" ", "") != f"{cls.__module__}:{cls.__qualname__}":
            raise PluginError(f"memory system {name!r} is registered twice: by {_qualname(cls)} and by "
                              f"{entry_point_where(ep, GROUP)}; rename one.")
        with _LOCK:
            existing = _REGISTERED.get(name)
            if existing is not None and _qualname(existing) != _qualname(cls):
                raise PluginError(f"memory system {name!r} is registered twice: by {_qualname(existing)} and by "
                                  f"{_qualname(cls)}; rename one.")
            _REGISTERED[name] = cls
        return cls

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


@functools.cache
def _declared() -> tuple[dict[str, EntryPoint], dict[str, list[EntryPoint]]]:
    """The entry point chosen for each name, and the refused ones of each clashing name (see the docstring)."""
    by_name = entry_points_by_name(GROUP)
    chosen: dict[str, EntryPoint] = {}
    refused: dict[str, list[EntryPoint]] = {}
    for name, eps in by_name.items():
        shipped = [ep for ep in eps if dist_name(ep) == SHIPPED_BY]
        if len(eps) == 1 or shipped:
            chosen[name] = (shipped or eps)[0]
        if len(eps) > 1:
            refused[name] = sorted((ep for ep in eps if ep is not chosen.get(name)), key=dist_name)
    return chosen, refused


def _entry_points() -> dict[str, EntryPoint]:
    return _declared()[0]


def clash(name: str) -> str | None:
    """Why other distributions' entry points for ``name`` are refused (None when no two declare it)."""
    chosen, refused = _declared()
    if name not in refused:
        return None
    others = " and ".join(f"{dist_name(ep)} ({ep.value})" for ep in refused[name])
    if name in chosen:
        return (f"memory system {name!r} ships with {SHIPPED_BY}; the plug-in entry point of {others} in group "
                f"{GROUP} is refused (a plug-in cannot replace a shipped system): register the plug-in under "
                "another name.")
    count = {2: "two", 3: "three"}.get(len(refused[name]), str(len(refused[name])))
    return (f"memory system {name!r} is declared by {count} plug-ins, {others}; memopt will not choose one: "
            "uninstall one, or register them under different names.")


def discover() -> list[str]:
    """Read the installed entry points again (after installing a plug-in into a running process); the names."""
    _declared.cache_clear()
    return system_names()


def system_names() -> list[str]:
    """Every known memory system (registered in this process or installed by entry point), sorted."""
    with _LOCK:
        registered = set(_REGISTERED)
    return sorted(registered | set(_entry_points()) | set(_declared()[1]))


def _load(ep: EntryPoint) -> type[MemorySystem]:
    obj, where = load_entry_point(ep, "memory system", GROUP)
    if not (isinstance(obj, type) and issubclass(obj, MemorySystem)):
        raise PluginError(f"memory system {ep.name!r} ({where}): {ep.value} is not a MemorySystem subclass.")
    with _LOCK:
        registered = _REGISTERED.get(ep.name)
        if registered is None:
            if obj.__dict__.get("name") not in (None, "", ep.name):
                raise PluginError(f"memory system {ep.name!r} ({where}): the class is registered as "
                                  f"{obj.__dict__['name']!r}; name the entry point {obj.__dict__['name']} too.")
            try:
                memory_system(ep.name)(obj)
            except PluginError as e:
                raise PluginError(f"{e} ({where})") from None
        elif registered is not obj:
            raise PluginError(f"memory system {ep.name!r} ({where}) names {_qualname(obj)}, but {ep.name!r} is "
                              f"already registered by {_qualname(registered)}.")
    return obj


def system_class(name: str) -> type[MemorySystem]:
    """The `MemorySystem` class registered under ``name`` (loading its plug-in on first use)."""
    problem = clash(name)
    with _LOCK:
        cls = _REGISTERED.get(name)
    ep = _entry_points().get(name)
    if problem is not None and ep is None:
        raise PluginError(problem)
    if problem is not None:
        _warn_once(problem)
    if cls is not None:
        return cls
    if ep is None:
        raise ConfigError(f"unknown pipeline {name!r}; choose one of {', '.join(system_names()) or 'none'} "
                          f"(memory systems are registered with @memory_system or installed through the "
                          f"{GROUP!r} entry-point group).")
    return _load(ep)


@functools.cache
def _warn_once(message: str) -> None:
    _log.warning("warning: %s", message)


def system_source(name: str) -> str:
    """Where a system comes from: its entry point's distribution and value, or the module that registered it."""
    ep = _entry_points().get(name)
    if ep is not None:
        dist = f"{ep.dist.name} {ep.dist.version}: " if ep.dist is not None else ""
        return f"{dist}{ep.value}"
    return _qualname(system_class(name))


def make_system(name: str, *, prompts: str | Path | None = None, instructions: dict[str, str] | None = None,
                **knobs: int) -> MemorySystem:
    """Build the memory system ``name`` with prompts from ``prompts`` (default: its seed prompts)."""
    return system_class(name)(prompts=prompts, instructions=instructions, **knobs)
