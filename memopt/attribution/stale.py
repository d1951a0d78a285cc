"""A statement kept stale beside the new fact: the context held the needed information, but a store unit also kept
the old statement the answer followed, and the op that rewrote the unit after reading the change kept it (a rolling
summary folding in "she moved to Lyon" while keeping "lives in Porto"; a replace that changed the city and kept the
old employer). The op failed to revise existing memory: an
``UpdateError`` of that op (`memopt.attribution.memtrace`)."""

from __future__ import annotations

import re

import networkx as nx

from memopt.attribution.case import FailedCase
from memopt.attribution.normalise import plain
from memopt.attribution.probe import Probe
from memopt.core.text import stem_set
from memopt.trace.graph import versions_of

__all__ = ["kept_stale"]

_CLAUSE = re.compile(r"[.;,()\n]+|\s+-\s+")


def _clauses(text: str) -> set[str]:
    """A text's clauses (split at sentence ends, semicolons, commas and brackets), spaces and case folded."""
    return {" ".join(c.split()).casefold() for c in _CLAUSE.split(text) if len(c.split()) >= 2}


def kept_stale(case: FailedCase, probe: Probe, live: frozenset[str]) -> tuple[str, str] | None:
    """(the unit, the op) when a store unit in the answer's context holds the needed information, and an op that
    wrote one of its versions, reading the change (a turn the information comes from, or a fact taken from it), kept a
    clause of the version before that the context still holds, that does not state it and has a word of the wrong
    answer (a word of the prediction neither the gold nor the question has); None otherwise."""
    G = case.G
    prediction = (case.prediction or plain(G.nodes[case.answer_var].get("value"))).strip()
    wrong = stem_set(prediction) - stem_set(case.gold) - stem_set(case.question)
    if not wrong or probe.computed or any(piece.computed for piece in probe.pieces):
        return None  # a count or a duration is computed from the facts, not stated in one
    sources = sorted({t for piece in probe.pieces for t in piece.turns})
    news = set(sources) | {v for v in case.derived_from(sources) if "action" not in G.nodes[v]}
    above = {a for v in case.context_vars for a in nx.ancestors(G, v)} | set(case.context_vars)
    for unit in sorted((u for u in above if "action" in G.nodes[u] and u in live), key=lambda u: G.nodes[u]["created"]):
        chain = versions_of(G, G.nodes[unit]["name"])
        chain = chain[:chain.index(unit) + 1] if unit in chain else [unit]
        now = _clauses(probe.read(unit))
        for old, new in zip(chain, chain[1:], strict=False):
            writer = next(iter(G.predecessors(new)), None)
            if writer is None or old not in G.predecessors(writer) or not news & set(G.predecessors(writer)):
                continue
            kept = sorted(c for c in now & _clauses(probe.read(new)) & _clauses(probe.read(old)) if wrong & stem_set(c))
            if kept and probe.holds(unit) and not any(probe.holds_text(c) for c in kept):
                return unit, writer
    return None
