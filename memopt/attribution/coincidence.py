"""The needed words in the context by coincidence: with gold evidence, a context that states the gold only through
units that come from other turns (a boarding pass stating the flight number a rebooking chat gave) while the
evidence's own unit was found for the question and then dropped before the context (a rerank demoting it below a
fixed cut). The answer op never had the information; the retrieval op that dropped the unit is where it stopped
(`memopt.attribution.memtrace` then blames the op that ranked it below the cut, when the cut was faithful)."""

from __future__ import annotations

from memopt.attribution.case import FailedCase
from memopt.attribution.probe import Probe

__all__ = ["dropped_evidence"]


def dropped_evidence(case: FailedCase, probe: Probe) -> str | None:
    """The retrieval op of the question that read a unit derived from the evidence (and holding a piece) and wrote
    nothing naming it, when the units the context was written from all come from other turns; None otherwise (also
    with retrieved evidence, whose turns are chosen by the gold's words)."""
    G, context_op = case.G, case.context_op
    if case.pseudo_evidence or context_op is None or not case.retrieval_ops:
        return None
    turns = {G.nodes[t]["name"].removeprefix("turn:") for piece in probe.pieces for t in piece.turns}

    def from_evidence(unit: str) -> bool:
        return bool(set(G.nodes[unit].get("sources") or ()) & turns)

    shown = {v for v in G.predecessors(context_op) if "action" in G.nodes[v]}
    shown |= {u for v in case.context_vars for u in G.nodes[v].get("refs") or ()}
    if not turns or not shown or any(from_evidence(u) for u in shown):
        return None
    for op in case.retrieval_ops:
        read = {u for v in G.predecessors(op) for u in [v, *(G.nodes[v].get("refs") or ())] if "action" in G.nodes[u]}
        wrote = {u for w in G.successors(op) for u in G.nodes[w].get("refs") or ()}
        dropped = sorted(u for u in read - wrote if from_evidence(u))
        if (wrote or op == context_op) and any(probe.pieces_held(u) for u in dropped):  # judged only when dropped
            return op
    return None
