"""The ``memtrace`` method: iterative subgraph tracing from a failed answer back to its cause.

1. Unanswerable question, or the context read by the answer op holds the information →
   ``ResponseError`` at the answer op.
2. Otherwise, look at the store as it was when the question was asked: the live units derived
   from the evidence turns (for a long-context pipeline, the evidence turns themselves). If one
   holds the information → ``RetrievalError`` at the first retrieval op of the question that read
   it and wrote nothing holding it (a rerank, a fusion, a truncation), else at the first search
   that did not bring it back.
3. Otherwise follow the information forward from the evidence turns through every variable derived
   from them before the question (buffers, temporary documents, MemCells, facts, unit versions: any
   number of hops and ops). A copy is lost where its next version no longer holds it (an overwrite
   or a trim → ``UpdateError``, a delete → ``DeletionError``), or where every op that read it wrote
   nothing holding it (typed by that op's stage: extraction → ``ExtractionError``; an evidence turn
   nothing kept → the first extraction op that read it). The op that lost the last copy is blamed;
   a store unit's loss decides before a side copy's (a prompt that listed the memories).

"Holds" is `Probe.holds` (verbatim evidence words, or the judge on a careful reading:
`memopt.attribution.normalise`). Only variables on the evidence's provenance are judged, so judge
calls stay few on long graphs.
"""

from __future__ import annotations

import time

from memopt.attribution.case import FailedCase, Probe, pseudo_discount
from memopt.attribution.types import Attribution
from memopt.judge.judges import Judge
from memopt.trace.graph import op_stages, versions_of

__all__ = ["memtrace"]


def _result(case: FailedCase, probe: Probe, started: float, error_type: str, op: str, reason: str,
            path: list[str | None], confidence: float = 1.0) -> Attribution:
    return Attribution(case.case_id, error_type, op, case.G.nodes[op]["operation"],
                       tuple(p for p in path if p), reason, pseudo_discount(case, confidence), probe.calls, None,
                       "memtrace", time.perf_counter() - started)


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
        op = _retrieval_loss(case, probe, retrieval)
        return _result(case, probe, started, "RetrievalError", op,
                       f"the store held the information at question time ({held[0]}) but the context did not",
                       [*evidence, held[0], op, context, answer_op])
    return _upstream(case, probe, started, asked)


def _retrieval_loss(case: FailedCase, probe: Probe, retrieval: list[str]) -> str:
    """The retrieval op where the information stopped: the first that read it and wrote nothing holding it (a
    rerank, a fusion, a truncation), else the first search that did not bring it back. A result list another
    question's op wrote first and this op wrote again (same items, same identity) counts as this op's output."""
    G, mine = case.G, set(case.query_ops)

    def again(v: str) -> bool:
        d = G.nodes[v]
        writer = next(iter(G.predecessors(v)), None)
        return "action" not in d and d["kind"] not in ("turn", "question", "prompt") and writer not in mine

    def reads(op: str) -> list[str]:
        return [v for v in G.predecessors(op) if G.nodes[v]["kind"] != "question" and not again(v)]

    def writes(op: str) -> list[str]:
        return [*G.successors(op), *(v for v in G.predecessors(op) if again(v))]

    def carried(op: str) -> bool:
        out = writes(op)
        return any(probe.holds(w) for w in out) if out else any(probe.holds(v) for v in reads(op))

    droppers = [r for r in retrieval if writes(r) and any(probe.holds(v) for v in reads(r)) and not carried(r)]
    if droppers:
        return droppers[0]
    return next((r for r in retrieval if not carried(r)), retrieval[0])


def _live_at(G, node: str, time: int) -> bool:
    d = G.nodes[node]
    if d.get("deleted"):
        return False
    later = [v for v in versions_of(G, d["name"]) if G.nodes[v]["version"] > d["version"]]
    return not any(G.nodes[v]["created"] < time for v in later)


def _query_time(case: FailedCase) -> set[str]:
    """The ops of every question of the graph (ids ending ``:<conversation>:<key>``), not memory construction."""
    conversation = case.G.graph.get("conversation")
    suffixes = tuple(f":{conversation}:{c['key']}" for c in case.G.graph.get("cases") or ())
    return {n for n, d in case.G.nodes(data=True) if d.get("type") == "op" and n.endswith(suffixes)}


def _error_of(G, op: str, lost: str | None, overwritten: bool) -> str:
    """The error type of a loss at ``op``: a deleted version → DeletionError; an overwritten version → UpdateError;
    else by the op's stage (extraction first)."""
    if lost is not None and G.nodes[lost].get("deleted"):
        return "DeletionError"
    stages = op_stages(G, op)
    order = ("update", "extraction", "deletion") if overwritten else ("extraction", "update", "deletion")
    for stage in (*order, "retrieval", "response"):
        if stage in stages:
            return _TYPE[stage]
    return "UpdateError" if overwritten else "ExtractionError"


_TYPE = {"extraction": "ExtractionError", "update": "UpdateError", "deletion": "DeletionError",
         "retrieval": "RetrievalError", "response": "ResponseError"}


def _upstream(case: FailedCase, probe: Probe, started: float, asked: int) -> Attribution:
    """Follow the information from the evidence turns through every variable built before the question; blame the
    op where its last copy was lost (an overwrite, a trim, a delete, or an op that read it and wrote nothing
    holding it); a store unit's loss comes before a side copy's (a prompt listing the memories)."""
    G = case.G
    evidence = case.evidence_turns[:1]
    querying = _query_time(case)
    writers = {v: next(iter(G.predecessors(v)), None) for v in G}
    pool = [v for v in case.derived() if G.nodes[v]["created"] < asked and writers.get(v) not in querying]
    held = [*case.evidence_turns, *(v for v in pool if v not in case.evidence_turns and probe.holds(v))]
    holding = set(held)
    losses: list[tuple[int, str, str, str, bool]] = []
    for v in held:
        d = G.nodes[v]
        chain = versions_of(G, d["name"])
        after = chain[chain.index(v) + 1] if v in chain and chain.index(v) + 1 < len(chain) else None
        after = after if after is not None and G.nodes[after]["created"] < asked else None
        consumers = sorted((op for op in G.successors(v) if op not in querying and G.nodes[op]["start"] < asked),
                           key=lambda op: G.nodes[op]["start"])
        overwritten = after is not None and after not in holding
        if any(w in holding for op in consumers for w in G.successors(op)) and not (overwritten and "action" in d):
            continue  # passed on (a store unit's overwrite is a loss even when side copies were made of it)
        if overwritten:
            op = writers[after]
            losses.append((G.nodes[op]["start"], op, v, after, True))
        elif d["kind"] == "turn" and case.extractors:
            losses.append((G.nodes[case.extractors[0]]["start"], case.extractors[0], v, "", False))
        elif consumers and "action" not in d:
            losses.append((G.nodes[consumers[0]]["start"], consumers[0], v, "", False))
    if not losses:
        stored = [v for v in held if "action" in G.nodes[v]]
        if held == case.evidence_turns and not case.extractors:
            return _result(case, probe, started, "ResponseError", case.answer_op,
                           "no extraction step: the information only ever existed in the raw turns",
                           [*evidence, case.context_var, case.answer_op], confidence=0.6)
        op = case.retrieval_ops[0] if case.retrieval_ops else case.answer_op
        return _result(case, probe, started, "RetrievalError" if case.retrieval_ops else "ResponseError", op,
                       "a variable held the information but it was not retrieved",
                       [*evidence, (stored or held)[0], op], 0.6)
    stored_losses = [loss for loss in losses if "action" in G.nodes[loss[2]]]  # the store's copy decides first
    _, op, kept, lost, overwritten = max(stored_losses or losses, key=lambda loss: loss[0])
    error_type = _error_of(G, op, lost or None, overwritten)
    verb = {"DeletionError": "deleted it", "UpdateError": "overwrote or trimmed it"}.get(error_type, "dropped it")
    return _result(case, probe, started, error_type, op, f"{kept} held the information; {op} {verb}"
                   + (f" ({lost})" if lost else ""), [*evidence, kept, op, lost or None])
