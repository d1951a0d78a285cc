"""The ``memtrace`` method: iterative subgraph tracing from a failed answer back to its cause.

1. Unanswerable question, or the context read by the answer op holds the information →
   ``ResponseError`` at the answer op.
2. Otherwise, look at the store as it was when the question was asked: the live units derived
   from the evidence turns (for a long-context pipeline, the evidence turns themselves). If one
   holds the information → ``RetrievalError`` at the retrieval op that dropped it (the last one
   that read such a unit, else the first retrieval op).
3. Otherwise follow the evidence turns forward through every version of every unit and fact
   derived from them: none ever held the information → ``ExtractionError`` at the first op that
   extracted from an evidence turn (correcting it rescues the answer); some did → the write
   that removed the last live copy is decisive: an ``UpdateError`` at the op that degraded it, or a
   ``DeletionError`` at the op that deleted it
   (a fact that held it but never reached the store → ``UpdateError`` at the op of stage ``update``
   that read it).

Only variables on the evidence's provenance are judged, so judge calls stay few on long graphs.
"""

from __future__ import annotations

import time

from memopt.attribution.case import FailedCase, Probe, is_content
from memopt.attribution.types import Attribution
from memopt.judge import Judge
from memopt.trace.graph import op_stages, versions_of

__all__ = ["memtrace"]


def _result(case: FailedCase, probe: Probe, started: float, error_type: str, op: str, reason: str,
            path: list[str | None], confidence: float = 1.0) -> Attribution:
    if case.pseudo_evidence:
        confidence *= 0.7
    return Attribution(case.case_id, error_type, op, case.G.nodes[op]["operation"],
                       tuple(p for p in path if p), reason, round(confidence, 3), probe.calls, None, "memtrace",
                       time.perf_counter() - started)


def memtrace(case: FailedCase, judge: Judge) -> Attribution:
    """Blame the earliest decisive faulty operation of one failed case (see the module docstring)."""
    started = time.perf_counter()
    G, probe = case.G, Probe(case, judge)
    answer_op, context = case.answer_op, case.context_var
    evidence = case.evidence_turns[:1]
    if case.unanswerable:
        return _result(case, probe, started, "ResponseError", answer_op,
                       "the question cannot be answered from the conversation; the answer op did not abstain",
                       [context, answer_op, case.answer_var])
    if context is None or probe.holds(context):
        return _result(case, probe, started, "ResponseError", answer_op,
                       "the context held the needed information; the answer op did not use it",
                       [*evidence, context, answer_op, case.answer_var])
    retrieval = case.retrieval_ops
    asked = G.nodes[retrieval[0] if retrieval else answer_op]["start"]
    candidates = [u for u in case.stored() if G.nodes[u]["created"] < asked and _live_at(G, u, asked)]
    candidates += [t for t in case.evidence_turns if any(G.has_edge(t, r) for r in retrieval)]
    held = [u for u in candidates if probe.holds(u)]
    if held and retrieval:
        readers = [r for r in retrieval if any(G.has_edge(u, r) for u in held)]
        op = readers[-1] if readers else retrieval[0]
        return _result(case, probe, started, "RetrievalError", op,
                       f"the store held the information at question time ({held[0]}) but the context did not",
                       [*evidence, held[0], op, context, answer_op])
    return _upstream(case, probe, started, asked)


def _live_at(G, node: str, time: int) -> bool:
    d = G.nodes[node]
    if d.get("deleted"):
        return False
    later = [v for v in versions_of(G, d["name"]) if G.nodes[v]["version"] > d["version"]]
    return not any(G.nodes[v]["created"] < time for v in later)


def _upstream(case: FailedCase, probe: Probe, started: float, asked: int) -> Attribution:
    G = case.G
    evidence = case.evidence_turns[:1]
    versions = [v for v in case.derived() if is_content(G, v) and G.nodes[v]["created"] < asked]
    holding = [v for v in versions if not G.nodes[v].get("deleted") and probe.holds(v)]
    if not holding:
        if not case.extractors:
            return _result(case, probe, started, "ResponseError", case.answer_op,
                           "no extraction step: the information only ever existed in the raw turns",
                           [*evidence, case.context_var, case.answer_op], confidence=0.6)
        op = case.extractors[0]
        return _result(case, probe, started, "ExtractionError", op,
                       "the needed information never entered any fact or memory unit", [*evidence, op])
    stored = [v for v in holding if "action" in G.nodes[v]]
    if not stored:
        fact = holding[0]
        readers = sorted(G.successors(fact), key=lambda n: G.nodes[n]["start"])
        op = next((r for r in readers if "update" in op_stages(G, r)), readers[0] if readers else None)
        if op is None:
            return _result(case, probe, started, "ExtractionError", next(G.predecessors(fact)),
                           "the fact holding the information was never stored", [*evidence, fact], 0.6)
        return _result(case, probe, started, "UpdateError", op,
                       f"{fact} held the information but no memory unit ever stored it", [*evidence, fact, op])
    losses = []
    for name in dict.fromkeys(G.nodes[v]["name"] for v in stored):
        chain = versions_of(G, name)
        last = max(i for i, v in enumerate(chain) if v in stored)
        if last + 1 < len(chain) and G.nodes[chain[last + 1]]["created"] < asked:
            losses.append((chain[last], chain[last + 1]))
    if not losses:
        op = case.retrieval_ops[0] if case.retrieval_ops else case.answer_op
        return _result(case, probe, started, "RetrievalError", op,
                       "a unit held the information but it was not retrieved", [*evidence, stored[0], op], 0.6)
    kept, lost = max(losses, key=lambda pair: G.nodes[pair[1]]["created"])
    op = next(G.predecessors(lost))
    deleted = bool(G.nodes[lost].get("deleted"))
    return _result(case, probe, started, "DeletionError" if deleted else "UpdateError", op,
                   f"{kept} held the information; {op} {'deleted' if deleted else 'overwrote'} it ({lost})",
                   [*evidence, kept, op, lost])
