"""Evidence seeding: the turns a failed answer should have come from.

The gold evidence dia_ids when the data has them; otherwise pseudo-evidence, as MemTrace does: the
``k`` turns closest to the question plus the gold answer by bm25 (the memory store's search).
"""

from __future__ import annotations

import networkx as nx

from memopt.systems.store import MemoryStore
from memopt.trace.graph import variables

__all__ = ["pseudo_evidence", "seed_evidence"]


def pseudo_evidence(G: nx.DiGraph, question: str, gold: str, k: int = 2) -> tuple[str, ...]:
    """The dia_ids of the ``k`` turns of the graph that best match question + gold (bm25)."""
    store = MemoryStore(name="turns")
    for node in variables(G, "turn"):
        value = G.nodes[node]["value"]
        store.add(f"{value['speaker']}: {value['text']}", source=[G.nodes[node]["name"].removeprefix("turn:")])
    return tuple(unit.source[0] for unit, _ in store.search(f"{question} {gold}", k=k))


def seed_evidence(G: nx.DiGraph, question: str, gold: str, evidence: tuple[str, ...]) -> tuple[tuple[str, ...], bool]:
    """(evidence dia_ids, whether they are pseudo-evidence): gold evidence present in the graph, else bm25."""
    present = tuple(e for e in evidence if f"turn:{e}@1" in G)
    if present:
        return present, False
    return pseudo_evidence(G, question, gold), True
