"""A statement kept stale beside the new fact: the context held the needed information, but a store unit also kept
the old statement the answer followed, and the op that rewrote the unit after reading the change kept it (a rolling
summary folding in "she moved to Lyon" while keeping "lives in Porto"). The op failed to revise existing memory: an
``UpdateError`` of that op (`memopt.attribution.memtrace`)."""

from __future__ import annotations

import networkx as nx

from memopt.attribution.case import FailedCase
from memopt.attribution.normalise import plain
from memopt.attribution.probe import Probe
from memopt.core.text import overlap, sentences
from memopt.trace.graph import versions_of

__all__ = ["kept_stale"]

_FOLLOWED = 0.8  # share of the prediction's words a sentence must hold to be the one the answer followed


def _followed(text: str, prediction: str) -> list[str]:
    """The sentences of a text that state the prediction's words."""
    return [s for line in text.splitlines() for s in sentences(line) if overlap(prediction, s) >= _FOLLOWED]


def kept_stale(case: FailedCase, probe: Probe, live: frozenset[str]) -> tuple[str, str] | None:
    """(the unit, the op) when a store unit in the answer's context holds the needed information beside an older
    sentence the answer followed, which the op that wrote this version kept after reading a turn the information
    comes from; None otherwise."""
    G = case.G
    prediction = (case.prediction or plain(G.nodes[case.answer_var].get("value"))).strip()
    if not prediction:
        return None
    sources = {t for piece in probe.pieces for t in piece.turns}
    above = {a for v in case.context_vars for a in nx.ancestors(G, v)} | set(case.context_vars)
    for unit in sorted((u for u in above if "action" in G.nodes[u] and u in live), key=lambda u: G.nodes[u]["created"]):
        writer = next(iter(G.predecessors(unit)), None)
        if writer is None or not sources & set(G.predecessors(writer)):
            continue
        chain = versions_of(G, G.nodes[unit]["name"])
        before = [v for v in chain if G.nodes[v]["version"] < G.nodes[unit]["version"] and v in G.predecessors(writer)]
        if not before or not probe.holds(unit):
            continue
        old = _followed(probe.read(before[-1]), prediction)
        kept = [s for s in _followed(probe.read(unit), prediction) if s in old]
        if kept and not any(probe.holds_text(s) for s in kept):
            return unit, writer
    return None
