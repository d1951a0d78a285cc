"""One registry idiom for every pluggable kind: a decorator, entry points, lookup by name, a listing.

A `Registry` maps names to registered objects of one kind (attribution methods, feedback kinds, ...).
An object is registered in one of two ways:

- in code, with the kind's decorator (``@attribution_method("name")``, ``@feedback_kind("name")``),
  which calls `Registry.register`;
- by an installed package, with an entry point in the kind's group (``memopt.attribution_methods``,
  ``memopt.feedback_kinds``) whose name is the registered name and whose value is the object
  (``first_fault = "my_package.methods:first_fault"``).

memopt's own entries are registered by importing the kind's ``builtins`` module on the first lookup;
entry points are listed on the first lookup and loaded only when their name is asked for, so
``memopt --help`` stays fast and a broken plug-in fails with one `PluginError` naming its entry point
when it is used, never breaking the others. A plug-in cannot take a shipped name (its entry point is
refused, and using the name warns once); two plug-ins declaring one name are a `PluginError` naming both.
Memory systems use it too (`memopt.systems.registry`, adding their declaration checks); memopt ships them as entry
points of its own distribution, so a name declared by an entry point of memopt is shipped as well.
"""

from __future__ import annotations

import functools
import importlib
import logging
import threading
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from typing import Generic, TypeVar

from memopt.core.errors import ConfigError, PluginError

__all__ = ["Registry", "SHIPPED_BY", "entry_adopter", "load_entry_point", "entry_point_where", "entry_points_by_name",
           "dist_name"]

SHIPPED_BY = "memopt"  # the distribution whose entries a plug-in cannot replace
T = TypeVar("T")
_log = logging.getLogger(__name__)


def dist_name(ep: EntryPoint) -> str:
    """The distribution that declares an entry point (for messages and the shipped-name rule)."""
    return ep.dist.name if ep.dist is not None else "an unknown distribution"


def entry_points_by_name(group: str) -> dict[str, list[EntryPoint]]:
    """The entry points of ``group`` by name, each (distribution, value) once (an install may list one twice)."""
    by_name: dict[str, list[EntryPoint]] = {}
    for ep in entry_points(group=group):
        same = by_name.setdefault(ep.name, [])
        if not any(dist_name(e) == dist_name(ep) and e.value == ep.value for e in same):
            same.append(ep)
    return by_name


def entry_adopter(kind: str, entry: Callable[..., T], expects: str) -> Callable[[str, object], T]:
    """The adoption rule of a kind whose entries are ``entry(name, function)`` records: a record is kept when it bears
    the name it is registered under, a plain function is wrapped, anything else is a `PluginError` saying that the
    kind ``expects`` (e.g. "a function of (FailedCase, Judge)")."""

    def adopt(name: str, obj: object) -> T:
        if isinstance(obj, entry):  # type: ignore[arg-type]
            if getattr(obj, "name", name) != name:
                raise PluginError(f"{kind} {obj.name!r} is also declared as {name!r}; use one name.")  # type: ignore[attr-defined]
            return obj  # type: ignore[return-value]
        if callable(obj) and not isinstance(obj, type):
            return entry(name, obj)
        raise PluginError(f"{kind} {name!r}: {obj!r} is not {expects}.")

    return adopt


class Registry(Generic[T]):
    """Names → registered objects of one kind (see the module docstring)."""

    def __init__(self, kind: str, group: str, builtins: str | None, adopt: Callable[[str, object], T], *,
                 unknown_hint: str = "") -> None:
        """``kind``: words for errors ("attribution method"); ``group``: the entry-point group; ``builtins``: the
        module registering memopt's own entries (None when memopt ships them as entry points of its own
        distribution, as it does its memory systems); ``adopt``: turns a loaded object into a registered one (or
        raises `PluginError` saying what it should be); ``unknown_hint``: how an unknown name is usually given."""
        self.kind, self.group, self.builtins, self._adopt = kind, group, builtins, adopt
        self._entries: dict[str, T] = {}
        self._modules: dict[str, str] = {}
        self._loaded: set[str] = set()  # names registered by loading an entry point
        self._shipped: list[str] = []
        self._lock = threading.RLock()
        self._loading_builtins = False
        self._builtins_loaded = builtins is None
        self._unknown_hint = unknown_hint

    # registration
    def register(self, name: str, obj: object, *, module: str) -> T:
        """Register ``obj`` under ``name`` (``module``: where it is defined, to tell shipped from plug-in)."""
        if not (isinstance(name, str) and name.isidentifier()):
            raise PluginError(f"{self.kind} name {name!r} ({module}): use a Python identifier (letters, digits, "
                              "underscores), e.g. 'my_name'.")
        shipped = module == SHIPPED_BY or module.startswith(SHIPPED_BY + ".")
        with self._lock:
            if not shipped:
                self._load_builtins()
            existing = self._entries.get(name)
            if existing is not None and existing is not obj and self._modules.get(name) != module:
                taken = "ships with memopt" if name in self._shipped else "is registered"
                raise PluginError(f"{self.kind} {name!r} {taken} already ({self.source(name)}); {module} cannot "
                                  "take its name: register it under another name.")
            entry = self._adopt(name, obj)
            self._entries[name] = entry
            self._modules[name] = module
            if shipped and name not in self._shipped:
                self._shipped.append(name)
        return entry

    def _load_builtins(self) -> None:
        with self._lock:
            if self._builtins_loaded or self._loading_builtins:
                return
            self._loading_builtins = True
            try:
                importlib.import_module(self.builtins)
                self._builtins_loaded = True
            finally:
                self._loading_builtins = False

    # entry points
    @functools.cached_property
    def _declared(self) -> tuple[dict[str, EntryPoint], dict[str, list[EntryPoint]]]:
        """The entry point chosen for each name, and the refused ones of each clashing name.

        A name memopt ships (registered by its own code, or declared by an entry point of memopt's own
        distribution) keeps memopt's entry; other distributions' entry points for it are refused. A name two
        plug-ins declare is refused for both.
        """
        self._load_builtins()
        by_name = entry_points_by_name(self.group)
        chosen: dict[str, EntryPoint] = {}
        refused: dict[str, list[EntryPoint]] = {}
        for name, eps in by_name.items():
            ours = [ep for ep in eps if dist_name(ep) == SHIPPED_BY]
            if name in self._shipped or ours:
                if ours and name not in self._shipped:
                    chosen[name] = ours[0]
                others = sorted((ep for ep in eps if dist_name(ep) != SHIPPED_BY), key=dist_name)
                if others:
                    refused[name] = others
                continue
            if len(eps) == 1:
                chosen[name] = eps[0]
            else:
                refused[name] = sorted(eps, key=dist_name)
        return chosen, refused

    def entry_point(self, name: str) -> EntryPoint | None:
        """The installed entry point chosen for ``name`` (None when no entry point declares it, or it is refused)."""
        return self._declared[0].get(name)

    def registered(self, name: str) -> T | None:
        """The object registered under ``name`` in this process so far (None when not yet loaded or unknown)."""
        with self._lock:
            return self._entries.get(name)

    def _shipped_by_entry_point(self) -> list[str]:
        """The names declared by entry points of memopt's own distribution, in their order."""
        return [name for name, ep in self._declared[0].items() if dist_name(ep) == SHIPPED_BY]

    def discover(self) -> list[str]:
        """Read the installed entry points again (after installing or removing a plug-in in a running process): a
        name loaded from an entry point no longer installed is forgotten; the names."""
        self.__dict__.pop("_declared", None)
        chosen = self._declared[0]
        with self._lock:
            for name in self._loaded - set(chosen):
                self._entries.pop(name, None)
                self._modules.pop(name, None)
            self._loaded &= set(chosen)
        return self.names()

    def clash(self, name: str) -> str | None:
        """Why other distributions' entry points for ``name`` are refused (None when nothing is refused)."""
        refused = self._declared[1].get(name)
        if not refused:
            return None
        others = " and ".join(f"{dist_name(ep)} ({ep.value})" for ep in refused)
        if name in self.shipped():
            return (f"{self.kind} {name!r} ships with {SHIPPED_BY}; the plug-in entry point of {others} in group "
                    f"{self.group} is refused (a plug-in cannot replace a shipped {self.kind}): register the "
                    "plug-in under another name.")
        count = {2: "two", 3: "three"}.get(len(refused), str(len(refused)))
        return (f"{self.kind} {name!r} is declared by {count} plug-ins, {others}; memopt will not choose "
                "one: uninstall one, or register them under different names.")

    # lookup
    def names(self) -> list[str]:
        """memopt's own names in their order, then every plug-in name (registered or installed), sorted."""
        chosen, refused = self._declared
        shipped = self.shipped()
        with self._lock:
            others = (set(self._entries) | set(chosen) | set(refused)) - set(shipped)
            return [*shipped, *sorted(others)]

    def shipped(self) -> list[str]:
        """memopt's own names, in their order (registered by its code, then declared by its entry points)."""
        self._load_builtins()
        with self._lock:
            own = list(self._shipped)
        return [*own, *(n for n in self._shipped_by_entry_point() if n not in own)]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.names()

    def get(self, name: str) -> T:
        """The object registered under ``name`` (loading its plug-in on first use)."""
        self._load_builtins()
        problem = self.clash(name)
        with self._lock:
            entry = self._entries.get(name)
        if problem is not None and entry is None and name not in self._declared[0]:
            raise PluginError(problem)
        if problem is not None:
            _warn_once(problem)
        if entry is not None:
            return entry
        ep = self._declared[0].get(name)
        if ep is None:
            raise ConfigError(self.unknown(name))
        return self._load(ep)

    def unknown(self, name: object) -> str:
        """The message for a name nothing registered: the known names, and how to register one."""
        known = ", ".join(self.names()) or "none"
        return (f"unknown {self._unknown_hint or self.kind} {name!r}; choose one of {known} "
                f"({self.kind}s are registered in code or installed through the {self.group!r} entry-point group; "
                "`memopt plugins` lists them).")

    def source(self, name: str) -> str:
        """Where an entry comes from: its entry point's distribution and value, or the module that registered it."""
        ep = self._declared[0].get(name)
        if ep is not None:
            dist = f"{ep.dist.name} {ep.dist.version}: " if ep.dist is not None else ""
            return f"{dist}{ep.value}"
        self._load_builtins()
        with self._lock:
            entry, module = self._entries.get(name), self._modules.get(name)
        if isinstance(entry, type):
            return f"{entry.__module__}.{entry.__qualname__}"
        return f"{module}.{name}" if module is not None else "?"

    def _load(self, ep: EntryPoint) -> T:
        obj, where = load_entry_point(ep, self.kind, self.group)
        with self._lock:
            entry = self._entries.get(ep.name)
            if entry is not None:
                return entry
            try:
                entry = self.register(ep.name, obj, module=ep.module)
            except PluginError as e:
                raise PluginError(f"{e} ({where})") from None
            self._loaded.add(ep.name)
            return entry


def entry_point_where(ep: EntryPoint, group: str) -> str:
    """Where an entry point comes from, for messages: name, value, group and distribution."""
    dist = f", from {ep.dist.name} {ep.dist.version}" if ep.dist is not None else ""
    return f"entry point {ep.name} = {ep.value} in group {group}{dist}"


def load_entry_point(ep: EntryPoint, kind: str, group: str) -> tuple[object, str]:
    """Import a plug-in's entry point: (the object, where it comes from); a plug-in that raises or calls
    ``sys.exit`` while importing is one `PluginError` naming it, never the end of memopt."""
    where = entry_point_where(ep, group)
    try:
        return ep.load(), where
    except PluginError as e:
        raise PluginError(f"{kind} {ep.name!r} ({where}): {e}") from None
    except SystemExit as e:  # a plug-in must not end memopt: its exit is reported as a broken plug-in
        raise PluginError(f"{kind} {ep.name!r} could not be loaded ({where}): importing it called "
                          f"sys.exit({e.code!r}); fix or uninstall the plug-in.") from None
    except Exception as e:  # a plug-in that does not import must not break the others: one clear error
        raise PluginError(f"{kind} {ep.name!r} could not be loaded ({where}): {type(e).__name__}: {e}") from None


@functools.cache
def _warn_once(message: str) -> None:
    _log.warning("warning: %s", message)
