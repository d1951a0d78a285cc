"""`memopt plugins`: every registered name of every pluggable kind, where it comes from, what it declares."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from memopt.registry import Registry

__all__ = ["plugins"]

KINDS = ("systems", "attribution", "feedback", "optimizers", "judges", "lm", "trackers", "readers")


def plugins(
    kind: str = typer.Option(None, "--kind", "-k", help="Only this kind: " + ", ".join(KINDS) + "."),
) -> None:
    """List memory systems, attribution methods, feedback kinds, optimizers, judges, in-process LM providers,
    trackers and trace readers (shipped and plug-ins); exit 2 if one is broken."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from memopt.core.errors import ConfigError

    if kind is not None and kind not in KINDS:
        raise ConfigError(f"--kind {kind!r}: choose one of {', '.join(KINDS)}.")
    table = Table(title="memopt plug-ins")
    for column in ("kind", "name", "declares", "from"):
        table.add_column(column)
    broken = 0
    for name in KINDS:
        if kind in (None, name):
            for row in _rows(name):
                broken += row[2].startswith("cannot load") or row[2].startswith("refused")
                style = "red" if row[2].startswith(("cannot load", "refused")) else ""
                table.add_row(*(escape(cell) for cell in row), style=style)
    Console(soft_wrap=True).print(table)
    if broken:
        sys.exit(2)


def _registry(kind: str) -> Registry:
    """The registry of one pluggable kind (memory systems have their own, `memopt.systems`)."""
    from memopt.attribution.registry import attribution_methods
    from memopt.feedback.kinds import feedback_kinds
    from memopt.judge.judges import judges
    from memopt.lm.providers import lm_providers
    from memopt.optimize.events import trackers
    from memopt.optimize.registry import optimizers
    from memopt.trace.readers import trace_readers

    return {"attribution": attribution_methods, "feedback": feedback_kinds, "optimizers": optimizers,
            "judges": judges, "lm": lm_providers, "trackers": trackers, "readers": trace_readers}[kind]


def _rows(kind: str) -> list[tuple[str, str, str, str]]:
    """(kind, name, what it declares, where it comes from) for every name of one kind."""
    from memopt.core.errors import MemoptError

    if kind == "systems":
        from memopt.systems import clash, system_class, system_names, system_source

        names, get, source, refused = system_names(), system_class, system_source, clash
        label = "memory system"
    else:
        registry = _registry(kind)
        names, get, source, refused = registry.names(), registry.get, registry.source, registry.clash
        label = registry.kind
    rows = []
    for name in names:
        try:
            obj = get(name)
        except MemoptError as e:
            rows.append((label, name, f"cannot load: {e}", ""))
            continue
        rows.append((label, name, _declares(kind, obj), source(name)))
        problem = refused(name)
        if problem is not None:
            rows.append((label, name, f"refused: {problem}", ""))
    return rows


def _declares(kind: str, obj: Any) -> str:
    if kind == "systems":
        return "ops: " + ", ".join(spec.name for spec in obj.operations)
    if kind == "attribution":
        return "needs replay" if obj.needs_replay else "–"
    if kind == "optimizers":
        reads = f"feedback {obj.feedback} only" if obj.feedback else "any feedback kind"
        return "gepa feedback kinds" if obj.gepa_feedback else reads
    if kind == "lm":
        return "simulated" if obj.simulated else "–"
    if kind in ("judges", "trackers"):
        return "–"
    if kind == "readers":
        return obj.describes or "–"
    flags = [("uses attribution" if obj.uses_attribution else "round-robin ops"),
             *(["gepa"] if obj.gepa else []), *(["control"] if obj.control else [])]
    return ", ".join(flags)
