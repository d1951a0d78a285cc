"""Which conversation turns a list of evidence ids names, however its writer spelled them.

Annotations and question metadata name evidence turns by the message node's full id (``Turn:D1:3@1``), its
``class:name`` (``Turn:D1:3``), its name (``D1:3``, ``t3``), the dia_id in its metadata (``D1:3``), or a tail of a
path-like name (``S1/t3`` for ``Message:conv-jon-gina/S1/t3``). `turn_refs` maps each to the turn it names, when
exactly one turn fits.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

import networkx as nx

__all__ = ["turn_refs"]


def turn_refs(G: nx.DiGraph, refs: Iterable[str]) -> tuple[str, ...]:
    """The dia_ids (turn names without ``turn:``) of the turns ``refs`` name, in order; a ref that names no turn,
    or several, is kept as given."""
    names: dict[str, set[str]] = defaultdict(set)
    for _, d in G.nodes(data=True):
        if d.get("kind") != "turn":
            continue
        dia = str(d["name"]).removeprefix("turn:")
        sc_id = str(d.get("sc_id") or "")
        short = dia.removeprefix(f"{d.get('sc_class')}:") if d.get("sc_class") else dia
        meta = d.get("metadata") or {}
        for label in (dia, sc_id, sc_id.rpartition("@")[0], short, meta.get("dia_id"), meta.get("id")):
            if isinstance(label, str) and label:
                names[label].add(dia)
    out = []
    for ref in refs:
        ref = str(ref)
        found = names.get(ref) or names.get(ref.rpartition("@")[0]) or {
            dia for label, dias in names.items() if label.endswith(("/" + ref, ":" + ref)) for dia in dias}
        out.append(next(iter(found)) if len(found) == 1 else ref)
    return tuple(out)
