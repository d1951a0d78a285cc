"""The ``memtrace`` method: iterative subgraph tracing from a failed answer back to its cause.

What the answer needs is a list of pieces (`memopt.attribution.need`: the items the gold lists, or the facts a
computed answer is computed from); "holds" is `memopt.attribution.probe.Probe`'s rule.

1. Unanswerable question, or the context the answer's first op read holds every piece → ``ResponseError`` at
   the answer op, or at the op of a chain of thought before it that read every piece and wrote its own text
   without them (`FailedCase.response_ops`); unless a store unit in the context kept beside it the old statement
   the answer followed, which the op that read the change left unrevised: an ``UpdateError`` of that op
   (`memopt.attribution.stale`); or, with gold evidence, unless it states them only from units of other turns
   while the evidence's own unit was dropped by a retrieval op of the question (`memopt.attribution.coincidence`;
   a ``RetrievalError``, blamed as in 2).
2. Otherwise, look at the store as it was when the question was asked: the live units derived from the
   evidence turns (for a long-context pipeline, the evidence turns the retrieval read). If they hold every
   piece → ``RetrievalError`` at the first retrieval op of the question that read a piece and wrote nothing
   holding it (a rerank, a fusion, a truncation, a filter; a list naming units by id holds what they hold),
   unless it was a faithful top-n cut of a later retrieval op's ranking (then the op that ranked the unit below
   the cut), else at the first search that did not bring it back.
3. Otherwise follow each missing piece forward from the turns it comes from through every variable derived
   from them before the question (buffers, candidate facts, MemCells, unit versions: any number of hops and
   ops). Information lives only in variables something reads: a copy no op reads and no answer depends on (a
   debug dump, an audit log, a transcript cache) keeps nothing alive, unless it is a store unit. A copy is
   lost where its next version no longer holds it, or where every op that read it wrote nothing (alive)
   holding it. What the op did decides the type: an overwrite is an ``UpdateError``, a delete a
   ``DeletionError`` (a raw message evicted from a store of messages, or an item removed, not rewritten, from a
   list the store keeps as one variable, too), whatever the op is called; a copy
   read and not kept is an ``ExtractionError`` (for an op its system declared, or a system prior named, the type
   of its stage). A delete or an overwrite an executor applied from another op's plan naming the unit is blamed
   on the op that wrote the plan (`memopt.attribution.decider`); an overwrite that applied an extracted fact word
   for word, on the op that extracted it (`memopt.attribution.faithful`). An evidence turn nothing kept is blamed on the
   op that read *that* turn (the earliest that writes something alive, or that its system declares to extract and
   that wrote nothing: an empty episode).
4. The **earliest decisive** loss is blamed: among the losses of the missing pieces, a store unit's loss
   before a side copy's, then the earliest in execution order (correcting it alone keeps the piece to the
   question). A loss the store recovered from (a unit holding the piece written after it, as when "plays squash"
   is overwritten and "quit squash" stored later) is not decisive: the later loss kept the piece from the
   question.

Only variables on the evidence's provenance are judged, so judge calls stay few on long graphs.
"""

from __future__ import annotations

import time
import weakref
from dataclasses import dataclass

import networkx as nx

from memopt.attribution.case import FailedCase, Probe, pseudo_discount
from memopt.attribution.coincidence import dropped_evidence
from memopt.attribution.decider import deciding_op
from memopt.attribution.faithful import applied_fact
from memopt.attribution.invented import invented_memory
from memopt.attribution.normalise import plain
from memopt.attribution.removals import emptied, removed_item, retired_unit
from memopt.attribution.stale import kept_stale
from memopt.attribution.steering import router_of, stopped_early
from memopt.attribution.types import Attribution
from memopt.core.text import find_dates
from memopt.judge.judges import Judge
from memopt.trace.graph import op_stages, versions_of
from memopt.trace.roles import decode_value
from memopt.trace.tombstones import is_delete_command

__all__ = ["memtrace", "alive"]

_TYPE = {"extraction": "ExtractionError", "update": "UpdateError", "deletion": "DeletionError",
         "retrieval": "RetrievalError", "response": "ResponseError"}
_ALIVE: weakref.WeakKeyDictionary[nx.DiGraph, tuple[int, frozenset[str]]] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class _Loss:
    start: int
    op: str
    kept: str
    lost: str | None
    error_type: str
    stored: bool


def _result(case: FailedCase, probe: Probe, started: float, error_type: str, op: str, reason: str,
            path: list[str | None], confidence: float = 1.0) -> Attribution:
    return Attribution(case.case_id, error_type, op, case.G.nodes[op]["operation"],
                       tuple(p for p in path if p), reason, pseudo_discount(case, confidence), probe.calls, None,
                       "memtrace", time.perf_counter() - started)


def _command(d: dict) -> bool:
    """Whether a variable is a command to delete something (`is_delete_command`), read by an executor."""
    value = d.get("value")
    return d.get("kind") not in ("turn", "question") and is_delete_command(
        decode_value(value) if isinstance(value, str) else value)


def alive(G: nx.DiGraph) -> frozenset[str]:
    """The variables information can live in: store units, a command to delete one that an executor reads (its
    effect is on the store), and every variable these or an answer derive from (cached on the graph until it
    changes size)."""
    cached = _ALIVE.get(G)
    if cached is not None and cached[0] == G.number_of_nodes():
        return cached[1]
    targets = [n for n, d in G.nodes(data=True) if d.get("type") == "variable"
               and ("action" in d or d.get("kind") == "answer" or (_command(d) and any(G.successors(n))))]
    found: set[str] = set(targets)
    stack = list(targets)
    while stack:
        for parent in G.predecessors(stack.pop()):
            if parent not in found:
                found.add(parent)
                stack.append(parent)
    result = frozenset(n for n in found if G.nodes[n].get("type") == "variable")
    _ALIVE[G] = (G.number_of_nodes(), result)
    return result


def memtrace(case: FailedCase, judge: Judge) -> Attribution:
    """Blame the earliest decisive faulty operation of one failed case (see the module docstring)."""
    started = time.perf_counter()
    G, probe = case.G, Probe(case, judge)
    answer_op, context = case.answer_op, case.context_vars
    evidence = case.evidence_turns[:1]
    if case.unanswerable:
        return _result(case, probe, started, "ResponseError", answer_op,
                       "the question cannot be answered from the conversation; the answer op did not abstain",
                       [*context, answer_op, case.answer_var])
    retrieval = case.retrieval_ops
    cut = dropped_evidence(case, probe) if context and probe.covers(context) else None
    if cut is not None:
        read = [v for v in G.predecessors(cut) if G.nodes[v]["kind"] != "question"]
        op = _ranker(G, cut, retrieval, read, list(G.successors(cut)))
        return _result(case, probe, started, "RetrievalError", op,
                       f"the context states the needed words only from other turns; {op} dropped the evidence's own "
                       "unit", [*evidence, op, *context, answer_op])
    if not context or probe.covers(context):
        invented = invented_memory(case, probe, alive(G))
        if invented is not None:
            return _result(case, probe, started, "ExtractionError", invented[1],
                           f"the context held the needed information beside {invented[0]}, which the answer "
                           f"followed and no turn it was written from states; {invented[1]} wrote it",
                           [*evidence, invented[0], invented[1], *context, answer_op])
        stale = kept_stale(case, probe, alive(G))
        if stale is not None:
            return _result(case, probe, started, "UpdateError", stale[1],
                           f"the context held the needed information, but {stale[0]} also kept the old statement the "
                           f"answer followed; {stale[1]} read the change and did not revise it",
                           [*evidence, stale[0], stale[1], *context, answer_op])
        op = _response_loss(case, probe)
        return _result(case, probe, started, "ResponseError", op,
                       "the context held the needed information; the answer op did not use it" if op == answer_op
                       else f"the context held the needed information; {op} read it and wrote what the answer "
                            "read without it", [*evidence, *context, op, answer_op, case.answer_var])
    asked = G.nodes[retrieval[0] if retrieval else answer_op]["start"]
    searched = _searched_stores(case)
    candidates = [u for u in case.stored() if G.nodes[u]["created"] < asked and _live_at(G, u, asked)
                  and (not searched or _store_of(G, u) in searched)]
    candidates += [t for t in case.evidence_turns if any(G.has_edge(t, r) for r in retrieval)]
    if retrieval and candidates and probe.covers(candidates):
        held = next(u for u in candidates if probe.pieces_held(u))
        op = _retrieval_loss(case, probe, retrieval, candidates)
        return _result(case, probe, started, "RetrievalError", op,
                       f"the store held the information at question time ({held}) but the context did not",
                       [*evidence, held, op, *context, answer_op])
    return _upstream(case, probe, started, asked, probe.missing(candidates), searched)


def _response_loss(case: FailedCase, probe: Probe) -> str:
    """The op of the answer's chain (a chain of thought, a draft, then the answer) that read the needed information
    and wrote text without it; the answer op when none did."""
    G = case.G
    for op in case.response_ops[:-1]:
        read = [v for v in G.predecessors(op) if G.nodes[v]["kind"] not in ("question", "prompt")]
        if read and probe.covers(read) and not probe.covers(list(G.successors(op))):
            return op
    return case.answer_op


def _retrieval_loss(case: FailedCase, probe: Probe, retrieval: list[str], candidates: list[str] | None = None) -> str:
    """The retrieval op where the information stopped: the first that read a piece and wrote nothing holding it
    (a rerank, a fusion, a truncation), else the first search (an op reading the store's units, or one writing
    the time window a search keeps to; not a linker naming the question's entities) that did not bring every
    piece back; a router's plan or an agentic check that steered the search there is blamed before it
    (`memopt.attribution.steering`). A result list
    another question's op wrote first and this op wrote again (same items, same identity) counts as this op's
    output."""
    G, mine = case.G, set(case.query_ops)
    every = range(len(probe.pieces))

    def again(v: str) -> bool:
        d = G.nodes[v]
        writer = next(iter(G.predecessors(v)), None)
        return "action" not in d and d["kind"] not in ("turn", "question", "prompt") and writer not in mine

    def reads(op: str) -> list[str]:
        return [v for v in G.predecessors(op) if G.nodes[v]["kind"] != "question" and not again(v)]

    def writes(op: str) -> list[str]:
        return [*G.successors(op), *(v for v in G.predecessors(op) if again(v))]

    def held(nodes: list[str]) -> set[int]:
        return {i for i in every if any(probe.holds_piece(v, i) for v in nodes)}

    def carried(op: str) -> bool:
        out = writes(op)
        return len(held(out if out else reads(op))) == len(probe.pieces)

    droppers = [r for r in retrieval if writes(r) and held(reads(r)) - held(writes(r))]
    if droppers:
        return _ranker(G, droppers[0], retrieval, reads(droppers[0]), writes(droppers[0]))
    lost = [r for r in retrieval if not carried(r)]
    searching = [r for r in lost if any("action" in G.nodes[v] for v in G.predecessors(r))
                 or any(find_dates(str(G.nodes[w].get("value"))) for w in G.successors(r))]
    steered = stopped_early(G, lost, retrieval)
    if steered is None and searching:
        steered = router_of(G, searching[0], retrieval, candidates or [], lambda u: bool(probe.pieces_held(u)))
    return steered or (searching or lost or retrieval)[0]


def _ranker(G: nx.DiGraph, cut: str, retrieval: list[str], read: list[str], wrote: list[str]) -> str:
    """The op blamed for what ``cut`` dropped: ``cut`` itself, unless it kept the top of a ranking a later retrieval
    op of the question wrote (a rerank: every item it kept ranked above every item it dropped, a faithful top-n
    cut; items are the units a list names, else its entries); then the op that ranked them. A search's own
    ranking is not blamed: it found the unit."""
    output = " ".join(" ".join(plain(G.nodes[w].get("value")).split()) for w in wrote)
    named = {u for w in wrote for u in G.nodes[w].get("refs") or ()}
    for v in read:
        writer = next(iter(G.predecessors(v)), None)
        if writer not in retrieval[1:]:
            continue
        refs, value = G.nodes[v].get("refs") or [], G.nodes[v].get("value")
        items = [(unit, G.nodes[unit].get("value")) for unit in refs] or (
            [(None, item) for item in value] if isinstance(value, list) else [])
        kept = [unit in named or _copied(item, output) for unit, item in items]
        if len(kept) > 1 and any(kept) and not all(kept) and kept == sorted(kept, reverse=True):
            return writer
    return cut


def _copied(item: object, output: str) -> bool:
    """Whether an output copies an item's text (its lines of three words or more, each verbatim)."""
    lines = [" ".join(line.split()) for line in plain(item).splitlines() if len(line.split()) >= 3]
    return bool(lines) and all(line in output for line in lines)


def _live_at(G: nx.DiGraph, node: str, time: int) -> bool:
    d = G.nodes[node]
    if d.get("deleted"):
        return False
    later = [v for v in versions_of(G, d["name"]) if G.nodes[v]["version"] > d["version"]]
    return not any(G.nodes[v]["created"] < time for v in later)


def _store_of(G: nx.DiGraph, unit: str) -> str:
    """The store a unit belongs to: its name without its own key (``memory:Contact`` of ``memory:Contact:acme``)."""
    return str(G.nodes[unit]["name"]).rpartition(":")[0]


def _searched_stores(case: FailedCase) -> set[str]:
    """The stores the questions' ops read units of: a unit of another store (a field candidate a merge consumes,
    a staging table) is a step of memory construction, not something a search could have returned."""
    G = case.G
    return {_store_of(G, v) for op in _query_time(case) for v in G.predecessors(op) if "action" in G.nodes[v]}


def _query_time(case: FailedCase) -> set[str]:
    """The ops of every question of the graph (ids ending ``:<conversation>:<key>``), not memory construction."""
    conversation = case.G.graph.get("conversation")
    suffixes = tuple(f":{conversation}:{c['key']}" for c in case.G.graph.get("cases") or ())
    return {n for n, d in case.G.nodes(data=True) if d.get("type") == "op" and n.endswith(suffixes)}


def _drop_type(G: nx.DiGraph, op: str, extracted: bool = False) -> str:
    """The type of a copy an op read and did not keep: its declared (or prior-named) stage's, extraction first;
    for an op nothing declares, ExtractionError (the information never entered memory there), but UpdateError when
    the copy lost was already extracted (``extracted``: not a turn) and the op rewrites a unit it read
    (`_revises`)."""
    d = G.nodes[op]
    if d["operation"] not in (G.graph.get("operations") or {}) and not d.get("prior_stage"):
        return "UpdateError" if extracted and _revises(G, op) else "ExtractionError"
    stages = op_stages(G, op)
    for stage in ("extraction", "update", "deletion", "retrieval", "response"):
        if stage in stages:
            return _TYPE[stage]
    return "ExtractionError"


def _names_piece(G: nx.DiGraph, op: str, probe: Probe, index: int) -> bool:
    """Whether an op's own metadata names the piece it handled (a reconcile run once per fact, ``{"fact": ...}``):
    of several ops reading one list of facts, that one is the op that had it."""
    meta = G.nodes[op].get("sc_metadata")
    text = plain({k: v for k, v in meta.items() if isinstance(v, str)}) if isinstance(meta, dict) else ""
    return bool(text.strip()) and probe.text_holds_piece(text, probe.pieces[index])


def _revises(G: nx.DiGraph, op: str) -> bool:
    """Whether an op rewrites a store unit it read: it writes the next version of a unit whose earlier version it
    reads (a document revision, a patched profile), or its category says update and it reads stored units (a
    reconcile that decided NOOP against them), so what it lost was existing memory."""
    read = {G.nodes[v]["name"] for v in G.predecessors(op) if "action" in G.nodes[v]}
    return any("action" in G.nodes[w] and G.nodes[w]["name"] in read for w in G.successors(op)) or bool(
        read and G.nodes[op].get("category") == "update")


def _upstream(case: FailedCase, probe: Probe, started: float, asked: int, missing: list[int],
              searched: set[str]) -> Attribution:
    """Follow each missing piece from its turns through every variable built before the question; blame the
    earliest decisive loss (see the module docstring)."""
    G = case.G
    querying = _query_time(case)
    live = alive(G)
    losses: list[_Loss] = []
    held_any: list[str] = []
    for index in missing or range(len(probe.pieces)):
        found = _losses(case, probe, index, asked, querying, live, held_any, searched)
        if found:
            losses.append(min(found, key=lambda loss: (not loss.stored, loss.start)))
    evidence = case.evidence_turns[:1]
    if not losses:
        stored = [v for v in held_any if "action" in G.nodes[v]]
        if not stored and not case.extractors:
            return _result(case, probe, started, "ResponseError", case.answer_op,
                           "no extraction step: the information only ever existed in the raw turns",
                           [*evidence, *case.context_vars, case.answer_op], confidence=0.6)
        op = case.retrieval_ops[0] if case.retrieval_ops else case.answer_op
        return _result(case, probe, started, "RetrievalError" if case.retrieval_ops else "ResponseError", op,
                       "a variable held the information but it was not retrieved",
                       [*evidence, (stored or held_any or [None])[0], op], 0.6)
    loss = min(losses, key=lambda loss: (not loss.stored, loss.start))
    verb = "did not carry out that delete" if loss.lost is None and _command(G.nodes[loss.kept]) else {
        "DeletionError": "deleted it", "UpdateError": "overwrote or trimmed it"}.get(loss.error_type, "dropped it")
    return _result(case, probe, started, loss.error_type, loss.op, f"{loss.kept} held the information; "
                   f"{loss.op} {verb}" + (f" ({loss.lost})" if loss.lost else ""),
                   [*evidence, loss.kept, loss.op, loss.lost])


def _losses(case: FailedCase, probe: Probe, index: int, asked: int, querying: set[str], live: frozenset[str],
            held_any: list[str], searched: set[str]) -> list[_Loss]:
    """Where the ``index``-th piece was lost, on every copy that held it before the question (``searched``: the
    stores the questions' ops read, `_searched_stores`)."""
    G = case.G
    turns = list(probe.pieces[index].turns)

    def writer(v: str) -> str | None:
        return next(iter(G.predecessors(v)), None)

    pool = [v for v in case.derived_from(turns) if G.nodes[v]["created"] < asked and writer(v) not in querying
            and v not in turns]
    held = [*turns, *(v for v in pool if v in live and probe.holds_piece(v, index))]
    held_any.extend(v for v in held if v not in held_any)
    restored = [G.nodes[v]["created"] for v in held if "action" in G.nodes[v]]
    holding = set(held)
    out = []
    for v in held:
        d = G.nodes[v]
        chain = versions_of(G, d["name"])
        after = chain[chain.index(v) + 1] if v in chain and chain.index(v) + 1 < len(chain) else None
        after = after if after is not None and G.nodes[after]["created"] < asked else None
        consumers = sorted((op for op in G.successors(v) if op not in querying and G.nodes[op]["start"] < asked),
                           key=lambda op: G.nodes[op]["start"])
        overwritten = after is not None and after not in holding
        retired = overwritten and G.nodes[after].get("deleted") and retired_unit(G, v, after, querying)
        if retired:  # a unit retired after it was consolidated into one the questions read: where it went decides
            overwritten = False
            consumers = [op for op in consumers if not any(G.nodes[w].get("deleted") for w in G.successors(op))]
        passed = any(w in holding for op in consumers for w in G.successors(op))
        if passed and not (overwritten and "action" in d):
            continue  # passed on (a store unit's overwrite is a loss even when side copies were made of it)
        if overwritten:
            op = deciding_op(G, writer(after), v)
            kind = "DeletionError" if G.nodes[after].get("deleted") or removed_item(
                G.nodes[v].get("value"), G.nodes[after].get("value"),
                lambda item: probe.text_holds_piece(plain(item), probe.pieces[index])) or (
                probe.pieces[index].polar and probe.states_gone(after, index)) else "UpdateError"
            faithful = kind == "UpdateError" and op == writer(after)
            source = applied_fact(G, op, v, after, tuple(turns)) if faithful else None
            op, kind = (source, "ExtractionError") if source is not None else (op, kind)
            out.append(_Loss(G.nodes[op]["start"], op, v, after, kind, "action" in d))
            continue
        if "action" in d and not retired and (not searched or _store_of(G, v) in searched):
            continue  # a store unit that stays: the store holds this piece (a unit of a store no search reads is
            # a step of construction: what its consumers kept decides)
        keepers = [op for op in consumers if any(w in live for w in G.successors(op)) or emptied(G, op)]
        gone = d.get("evicted")  # a raw message the system kept as its memory, and deleted
        if gone is not None and G.nodes[gone]["start"] < asked and not any(
                G.nodes[op]["start"] < G.nodes[gone]["start"] for op in keepers if op != gone):
            out.append(_Loss(G.nodes[gone]["start"], gone, v, None, "DeletionError", True))
            continue  # (a turn a summary covered before it was evicted is the summary's to keep)
        keepers = [op for op in keepers if op != gone]
        if d["kind"] == "turn" and not consumers:
            keepers = [op for op in case.extractors if G.nodes[op]["start"] > d["created"]][:1]
        named = [op for op in consumers if len(consumers) > 1 and _names_piece(G, op, probe, index)]
        chosen = (named or keepers or consumers)[:1]
        if chosen:
            op = chosen[0]
            # a delete command read and not carried out is a failure to remove
            kind = "DeletionError" if _command(d) else _drop_type(G, op, d["kind"] != "turn")
            out.append(_Loss(G.nodes[op]["start"], op, v, None, kind, False))
    # a loss the store recovered from (a unit holding the piece written after it) is not decisive
    return [loss for loss in out if not any(made > loss.start for made in restored)] or out
