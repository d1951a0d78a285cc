"""The registry of attribution methods: ``@attribution_method("name")``, entry points, lookup by name.

An attribution method takes a `FailedCase` and a `Judge` and returns an `Attribution` whose ``method``
is its name, with the judge calls and seconds it spent. It is registered with the decorator, or by an
installed package through an entry point in the ``memopt.attribution_methods`` group
(``first_fault = "my_package.methods:first_fault"``); the rules are those of `memopt.registry`
(a plug-in cannot take a shipped name). What the method needs is declared on registration:

- ``needs_replay``: it re-runs ops (counterfactual), so it cannot score a foreign graph
  (MemTraceBench) and is left out of the long-graph timing;
- the confidence rule is one function, `memopt.attribution.case.pseudo_discount` (a case whose evidence
  was found by words, not given, lowers the confidence): a method calls it on the confidence it returns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memopt.registry import Registry, entry_adopter

if TYPE_CHECKING:
    from memopt.attribution.case import FailedCase
    from memopt.attribution.types import Attribution
    from memopt.judge.judges import Judge

__all__ = ["AttributionMethod", "attribution_method", "attribution_methods", "method_names", "get_method",
           "METHODS", "GROUP"]

GROUP = "memopt.attribution_methods"
Method = Callable[["FailedCase", "Judge"], "Attribution"]


@dataclass(frozen=True)
class AttributionMethod:
    """A registered attribution method: its name, its function, and what it needs."""

    name: str
    blame: Method
    needs_replay: bool = False

    def __call__(self, case: FailedCase, judge: Judge) -> Attribution:
        """Blame one failed case."""
        return self.blame(case, judge)


_adopt = entry_adopter("attribution method", AttributionMethod, "a function of (FailedCase, Judge)")


attribution_methods: Registry[AttributionMethod] = Registry(
    "attribution method", GROUP, "memopt.attribution.methods", _adopt)


def attribution_method(name: str, *, needs_replay: bool = False) -> Callable[[Method], AttributionMethod]:
    """Decorator: register a function of (FailedCase, Judge) → Attribution as the attribution method ``name``."""

    def register(fn: Method) -> AttributionMethod:
        module = getattr(fn, "__module__", None) or "?"
        return attribution_methods.register(name, AttributionMethod(name, fn, needs_replay), module=module)

    return register


def method_names() -> list[str]:
    """Every attribution method: memopt's own in their order, then plug-ins."""
    return attribution_methods.names()


def get_method(name: str) -> AttributionMethod:
    """The attribution method registered under ``name`` (a `ConfigError` listing the known ones otherwise)."""
    return attribution_methods.get(name)


class _Methods(Mapping[str, AttributionMethod]):
    """The registry as a read-only mapping, name → method (kept for ``METHODS[name](case, judge)``)."""

    def __getitem__(self, name: str) -> AttributionMethod:
        if name not in attribution_methods:
            raise KeyError(name)
        return attribution_methods.get(name)

    def __iter__(self) -> Iterator[str]:
        return iter(attribution_methods.names())

    def __len__(self) -> int:
        return len(attribution_methods.names())

    def __repr__(self) -> str:
        return f"METHODS({', '.join(self)})"

    def __contains__(self, name: Any) -> bool:
        return name in attribution_methods


METHODS: Mapping[str, AttributionMethod] = _Methods()
