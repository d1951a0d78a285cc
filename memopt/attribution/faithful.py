"""An overwrite that applied an extracted fact word for word: the fact was the loss, not the overwrite.

Per-message memory systems (Mem0 and its kin) split a change in two: an extraction op writes candidate facts from a
message (the user's or the assistant's own), and an update op rewrites a unit from them. When the new version holds
nothing but the old version's words and one fact's words, and holds all of that fact, the update did what it was
told; when the fact's author read the turn the information comes from, the fact is where it was lost (an
assistant's misstatement taken for a user fact, a misread date), and the op that wrote it is blamed.
"""

from __future__ import annotations

import networkx as nx

from memopt.attribution.normalise import plain
from memopt.core.text import stem_set

__all__ = ["applied_fact"]


def _items(value: object) -> list[str]:
    """A fact variable's facts: one per text leaf."""
    return [line for line in plain(value).splitlines() if line.strip()]


def applied_fact(G: nx.DiGraph, executor: str, before: str, after: str, sources: tuple[str, ...]) -> str | None:
    """The op that wrote the fact ``executor`` copied into ``after`` (the next version of ``before``) after reading
    a turn the lost information comes from (``sources``), or None when the new version says something neither the
    old one nor one fact read says, or the fact's author never read those turns (a true fact of another turn put
    over the unit is the update's choice)."""
    old, new = stem_set(plain(G.nodes[before].get("value"))), stem_set(plain(G.nodes[after].get("value")))
    call = G.nodes[executor].get("sc_op_id") or executor
    for fact in G.predecessors(executor):
        d = G.nodes[fact]
        if fact == before or "action" in d or d.get("kind") in ("turn", "question"):
            continue
        author = next(iter(G.predecessors(fact)), None)
        if author is None or (G.nodes[author].get("sc_op_id") or author) == call:
            continue
        if not any(v in sources for v in G.predecessors(author)):
            continue
        for item in _items(d.get("value")):
            said = stem_set(item)
            if said and said <= new and new <= old | said and not said <= old:
                return author
    return None
