"""Baseline attribution methods that the bench compares ``memtrace`` with, on the same interface.

Each takes a `FailedCase` and a `Judge` and returns an `Attribution` (method, judge calls, seconds,
reason, evidence path); none raises for one hard case. As in ``memtrace``, an unanswerable question
(the gold abstains) is a ResponseError at the answer op, without a judge call.

The ops a method walks (`case_ops`): the case's own query ops and every ingestion op before them
(an op that searched the store, like ``retrieve``, read the whole store, which any ingestion op may
have changed), in time order, without ops that carry no content of their own (ops that steer
another op, as their system declares: ``segment``, ``search_similar``, ``rewrite_query``; ops that
read nothing but prompts). No method uses the evidence's provenance the way ``memtrace`` does.
Each op has a text view (`op_view`): *reads*, the content variables it read (an op that searched the
store: the store units live when it started; never prompts, questions or queries); *writes*, what it kept (the
non-deleted variables it wrote and, for an LLM op or an op that wrote nothing, the texts of its
recorded output, never a DELETE event or an ``old_memory``); *deletes*, the units it deleted. Every
item is dated the way a context line is (``[10 June 2022] Bea: …``: a turn by its session, a unit by
its session date, a fact by the session of the turn it came from), so relative dates stay readable.
"Holds the information" is `Probe`'s rule: the evidence turns verbatim (no judge call), else
``judge.contains`` of `FailedCase.information` in the text (one call).

- ``blame_response``: ResponseError at the answer op, no judge call (the floor; MemTrace's ablation).
- ``step_by_step``: judges every op in time order; the first whose reads hold the information and
  whose writes do not is the fault. One call per view judged (reads, then writes when the reads
  hold), so the cost grows with the graph.
- ``binary_search``: the state after op m is the text of the content variables that exist then and
  that a later op reads (the store until the retrieval, then the context); it holds the information
  before the first op and not after the answer op (the answer failed). Assuming that is monotonic,
  it bisects for the first op after which the state lacks it: one call per probe, ceil(log2 n) probes.
- ``all_at_once``: one ``judge.locate`` call over the serialized trace (`serialize_trace`), with the
  information `Probe` looks for (`FailedCase.information`) as the gold, as an LM reading the whole
  graph in one prompt would; SimLM reads only its first ``LOCATE_WINDOW`` characters.

The error type comes from the faulty op's declared stages (`memopt.taxonomy.error_of_stages`); an
update or deletion op is a DeletionError when what it deleted holds the information (one more call).
No fault found → ResponseError at the answer op.
"""

from __future__ import annotations

import time
import weakref
from dataclasses import dataclass
from typing import Any

import networkx as nx

from memopt.attribution.case import FailedCase, Probe, pseudo_discount, text_of
from memopt.attribution.types import Attribution
from memopt.core.text import format_date, parse_session_date
from memopt.judge.judges import Judge
from memopt.taxonomy import error_of_stages
from memopt.trace.graph import latest, memory_as_of, op_stages, ops_in_order, steering_ops

__all__ = ["OpView", "case_ops", "op_view", "serialize_trace", "blame_response", "step_by_step", "binary_search",
           "all_at_once"]

_NOT_CONTENT = frozenset({"prompt", "question", "query"})
_METADATA = frozenset({"ref", "id", "event", "old_memory", "turns", "score", "kind"})
_DATES: weakref.WeakKeyDictionary[nx.DiGraph, dict[int, str]] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class OpView:
    """The texts an op read, kept and deleted."""

    reads: tuple[str, ...]
    writes: tuple[str, ...]
    deletes: tuple[str, ...]


def _session_dates(G: nx.DiGraph) -> dict[int, str]:
    if G not in _DATES:
        days = {s["index"]: (s["date_time"], parse_session_date(s["date_time"])) for s in G.graph.get("sessions", [])}
        _DATES[G] = {i: format_date(day) if day else raw for i, (raw, day) in days.items()}
    return _DATES[G]


def _var_text(G: nx.DiGraph, node: str) -> str:
    """A variable as one dated item, the way a context shows it: ``[10 June 2022] text``."""
    d = G.nodes[node]
    value = d.get("value")
    if d["kind"] == "turn" and isinstance(value, dict):
        text, date = f"{value.get('speaker', '')}: {value.get('text', '')}", _session_dates(G).get(value.get("session"))
    else:
        text, date = text_of(value), d.get("session_date")
        turns = [t for t in d.get("derived_from") or () if t.startswith("turn:")]
        if date is None and d["kind"] != "context" and turns and (turn := latest(G, turns[0])) is not None:
            date = _session_dates(G).get(G.nodes[turn]["value"].get("session"))
    return f"[{date}] {text}" if date else text


def _reads(G: nx.DiGraph, op: str) -> list[str]:
    read = {v for v in G.predecessors(op) if G.nodes[v]["kind"] not in _NOT_CONTENT}
    if G.nodes[op].get("searched"):
        read |= set(memory_as_of(G, op))
    return sorted(read, key=lambda v: G.nodes[v]["created"])


def _output_texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        if value.get("event") == "DELETE":
            return []
        if isinstance(value.get("text"), str) and value.get("date"):
            return [f"[{value['date']}] {value['text']}"]
        return [t for k, v in value.items() if k not in _METADATA for t in _output_texts(v)]
    if isinstance(value, list):
        return [t for v in value for t in _output_texts(v)]
    return []


def op_view(case: FailedCase, op: str) -> OpView:
    """The reads, writes and deletes of one op as texts (see the module docstring)."""
    G = case.G
    d = G.nodes[op]
    reads = _reads(G, op)
    written = [v for v in G.successors(op) if G.nodes[v]["kind"] not in _NOT_CONTENT]
    kept = [v for v in written if not G.nodes[v].get("deleted")]
    writes = [_var_text(G, v) for v in kept]
    if d["op_kind"] == "llm" or not written:
        dated = {text_of(G.nodes[v].get("value")): _var_text(G, v) for v in [*reads, *kept]}
        gone = {t for v in written if G.nodes[v].get("deleted") for t in _output_texts(G.nodes[v].get("value"))}
        writes += [dated.get(t, t) for t in _output_texts(d.get("output")) if t not in gone]
    return OpView(tuple(_var_text(G, v) for v in reads), tuple(dict.fromkeys(t for t in writes if t.strip())),
                  tuple(_var_text(G, v) for v in written if G.nodes[v].get("deleted")))


def case_ops(case: FailedCase) -> list[str]:
    """The content-carrying ops the case's answer depends on, oldest first (see the module docstring)."""
    G = case.G
    conversation = G.graph.get("conversation")
    query_suffixes = tuple(f":{conversation}:{c['key']}" for c in G.graph.get("cases", []))
    asked = G.nodes[case.answer_op]["start"]
    own = set(case.query_ops)
    steering = steering_ops(G)
    found = []
    for op in ops_in_order(G):
        d = G.nodes[op]
        if op == case.answer_op or (
                (op in own or (d["start"] < asked and not op.endswith(query_suffixes)))
                and d["operation"] not in steering and _reads(G, op)):
            found.append(op)
    return found


def _holds(probe: Probe, texts: tuple[str, ...] | list[str]) -> bool:
    text = "\n".join(texts)
    return bool(text.strip()) and (probe.raw_holds(text) or probe.holds_text(text))


def _error_type(case: FailedCase, op: str, probe: Probe) -> str:
    """The error of the op a baseline found: a DeletionError when it deleted what held the information, whatever
    its stage (a per-message add that deletes); else its stage's."""
    stages = op_stages(case.G, op)
    deletes = op_view(case, op).deletes
    if deletes and _holds(probe, deletes):
        return "DeletionError"
    return error_of_stages(stages)


def _result(case: FailedCase, method: str, started: float, calls: int, error_type: str, op: str, reason: str,
            confidence: float = 1.0) -> Attribution:
    path = tuple(dict.fromkeys(n for n in (op, case.answer_op, case.answer_var) if n))
    return Attribution(case.case_id, error_type, op, case.G.nodes[op]["operation"], path, reason,
                       pseudo_discount(case, confidence), calls, None, method, time.perf_counter() - started)


def _unanswerable(case: FailedCase, method: str, started: float) -> Attribution:
    return _result(case, method, started, 0, "ResponseError", case.answer_op,
                   "the question cannot be answered from the conversation; the answer op did not abstain")


def blame_response(case: FailedCase, judge: Judge) -> Attribution:
    """ResponseError at the answer op, without a judge call."""
    started = time.perf_counter()
    return _result(case, "blame_response", started, 0, "ResponseError", case.answer_op,
                   "baseline: every failure is blamed on the answer op", confidence=0.5)


def step_by_step(case: FailedCase, judge: Judge) -> Attribution:
    """The first op, in time order, whose reads hold the information and whose writes do not."""
    started = time.perf_counter()
    if case.unanswerable:
        return _unanswerable(case, "step_by_step", started)
    probe = Probe(case, judge)
    for op in case_ops(case):
        view = op_view(case, op)
        if _holds(probe, view.reads) and not _holds(probe, view.writes):
            error = _error_type(case, op, probe)
            return _result(case, "step_by_step", started, probe.calls, error, op,
                           f"{op} read the information and did not keep it")
    return _result(case, "step_by_step", started, probe.calls, "ResponseError", case.answer_op,
                   "no op lost the information", confidence=0.6)


def _state(G: nx.DiGraph, ops: list[str], reads: dict[str, list[str]], m: int) -> str:
    """The text of the content variables that exist when ``ops[m + 1]`` starts and that it or a later op reads."""
    start = G.nodes[ops[m + 1]]["start"]
    later = {v for op in ops[m + 1:] for v in reads[op] if G.nodes[v]["created"] < start}
    return "\n".join(_var_text(G, v) for v in sorted(later, key=lambda v: G.nodes[v]["created"]))


def binary_search(case: FailedCase, judge: Judge) -> Attribution:
    """The first op after which the state no longer holds the information, by bisection."""
    started = time.perf_counter()
    if case.unanswerable:
        return _unanswerable(case, "binary_search", started)
    G, probe = case.G, Probe(case, judge)
    ops = case_ops(case)
    reads = {op: _reads(G, op) for op in ops}
    present, absent = -1, len(ops) - 1
    while absent - present > 1:
        mid = (present + absent) // 2
        if _holds(probe, [_state(G, ops, reads, mid)]):
            present = mid
        else:
            absent = mid
    op = ops[absent]
    if op == case.answer_op:
        return _result(case, "binary_search", started, probe.calls, "ResponseError", op,
                       "the state held the information until the answer op")
    error = _error_type(case, op, probe)
    return _result(case, "binary_search", started, probe.calls, error, op,
                   f"the state held the information before {op} and not after it")


def _line(texts: tuple[str, ...]) -> str:
    return " | ".join(" ".join(t.split()) for t in texts)


def serialize_trace(case: FailedCase) -> str:
    """The case's ops as text for one judge prompt: a block per op, oldest first, blank line between.

    Each block: ``[op_id] operation (stage)`` (its first declared stage), ``reads: …``, ``writes: …`` and,
    when the op deleted units, ``deletes: …``; items are separated by `` | `` (the format
    `memopt.judge.rules.judge_locate` reads).
    """
    blocks = []
    for op in case_ops(case):
        operation = case.G.nodes[op]["operation"]
        stages = op_stages(case.G, op)
        view = op_view(case, op)
        lines = [f"[{op}] {operation} ({stages[0] if stages else 'other'})", f"reads: {_line(view.reads)}",
                 f"writes: {_line(view.writes)}"]
        if view.deletes:
            lines.append(f"deletes: {_line(view.deletes)}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def all_at_once(case: FailedCase, judge: Judge) -> Attribution:
    """One ``judge.locate`` call over the serialized trace; an op id it names that is not an op → the answer op."""
    started = time.perf_counter()
    if case.unanswerable:
        return _unanswerable(case, "all_at_once", started)
    error_type, op = judge.locate(case.question, case.information, serialize_trace(case))
    G = case.G
    if op not in G or G.nodes[op].get("type") != "op":
        return _result(case, "all_at_once", started, 1, "ResponseError", case.answer_op,
                       f"the judge named no operation of the graph ({op!r})", confidence=0.5)
    return _result(case, "all_at_once", started, 1, error_type, op, "the judge located the fault in the whole trace")
