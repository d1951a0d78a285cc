"""Result lists that name store units instead of copying them: ``[{"id": "c3", "score": 0.31}]``,
``[{"chunk": "chunk-s2-1"}]``, ``["m1", "m4"]``.

A search often writes only the ids of what it found, and the rerank, cut, filter or packing after it passes ids
on; the text stays in the units. Such a list holds what the units it names hold. `name_references` records, on
each structured variable a question's op wrote, the unit versions it names in the order it names them (``refs``;
a ranking, when the list is one): a leaf of its value equal to the name of a store unit the variable derives from
(its ``class:name`` or its name; the newest version of it the variable derives from, or the version a name
ending ``@N`` pins: ``{"row": "mr-b79b@1"}``). Numbers count only under an
id key (``id``, ``memory_id``, ``ids``), so a rank or a count never names unit ``3``.
`memopt.attribution.probe.Probe` reads ``refs``; `memopt.attribution.memtrace` reads a ranking's order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import networkx as nx

__all__ = ["name_references"]


def _leaves(value: Any, key: str = "") -> Iterator[str]:
    """The names a value may give: its string leaves, and its integer leaves under an id key."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, str(k).lower())
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v, key)
    elif isinstance(value, str) and value.strip():
        yield value.strip()
    elif isinstance(value, int) and not isinstance(value, bool) and (key == "id" or key.endswith(("id", "ids"))):
        yield str(value)


def _labels(d: dict[str, Any]) -> tuple[str, ...]:
    """The names a unit version is called by: its ``class:name`` and its name."""
    full = str(d.get("sc_id") or d.get("name") or "").rpartition("@")[0]
    cls = d.get("sc_class")
    short = full.removeprefix(f"{cls}:") if cls else full
    return tuple(dict.fromkeys(x for x in (full, short) if x))


def _versioned(leaf: str, known: set[str]) -> tuple[str, int | None]:
    """A leaf as a unit's name and the version it pins: ``mr-b79b@1`` names version 1 of ``mr-b79b``."""
    name, at, version = leaf.rpartition("@")
    if leaf not in known and at and version.isdigit() and name in known:
        return name, int(version)
    return leaf, None


def name_references(G: nx.DiGraph, question_ops: Iterable[str]) -> None:
    """Set ``refs`` on every structured variable the ``question_ops`` wrote that names store units (module doc)."""
    units = [n for n, d in G.nodes(data=True) if d.get("type") == "variable" and "action" in d]
    known = {label for n in units for label in _labels(G.nodes[n])}
    for op in question_ops:
        for v in G.successors(op):
            value = G.nodes[v].get("value")
            leaves = [_versioned(leaf, known) for leaf in _leaves(value)] if isinstance(value, (dict, list)) else []
            pinned = {leaf: version for leaf, version in leaves if leaf in known and version is not None}
            given = [leaf for leaf, _ in leaves if leaf in known]
            named = set(given)
            if not named:
                continue
            found: dict[str, str] = {}
            for a in nx.ancestors(G, v):
                d = G.nodes[a]
                if "action" not in d or d.get("deleted"):
                    continue
                for label in _labels(d):
                    if label not in named or (label in pinned and d["version"] != pinned[label]):
                        continue
                    if label not in found or G.nodes[found[label]]["version"] < d["version"]:
                        found[label] = a
            if found:
                G.nodes[v]["refs"] = list(dict.fromkeys(found[label] for label in given if label in found))
