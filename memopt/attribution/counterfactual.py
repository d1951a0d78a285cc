"""The ``counterfactual`` method: find (or verify) the cause by replaying with an oracle correction.

For a candidate op, an oracle correction is applied to its recorded output and the conversation is
replayed (`memopt.trace.replay`: upstream served from the replay cache, downstream run again):

- extraction op (extract, facts, episode): add the evidence turns, with the gold answer, to its output;
- update op: cancel the UPDATE / DELETE that degraded or removed the unit (keeping the new fact as an ADD);
- retrieval op (retrieve, fuse, truncate): put the unit that held the information into its output;
- answer op: answer with the gold.

The cause is the earliest candidate that is locally wrong (it lost the information: an extraction op
whose outputs do not hold it, an update op that degraded or deleted a unit holding it, a retrieval
op whose context lacks it while the store held it; the answer op always qualifies) and whose
correction makes the judge accept the answer (``counterfactual``). `verify` checks one given
attribution the same way (``memtrace --verify``).
Candidates are the ops on the evidence's path: extraction ops that read an evidence turn, update
ops that wrote versions derived from the evidence, the case's retrieval ops, and the answer op.
"""

from __future__ import annotations

import copy
import time
from dataclasses import replace
from typing import Any

import networkx as nx

from memopt.attribution.case import CONTENT_KINDS, FailedCase, Probe, text_of
from memopt.attribution.types import Attribution
from memopt.judge import Judge
from memopt.taxonomy import error_of_stage, stage_of
from memopt.text import format_date, parse_session_date

__all__ = ["counterfactual", "verify", "correction", "candidates", "locally_wrong"]

_EXTRACTION_OUTPUT = {"facts": "facts", "summary": "summary", "updated_profile": "updated_profile"}


def _oracle_text(case: FailedCase) -> str:
    evidence = " ".join(case.evidence_texts)
    return f"{evidence} ({case.gold})".strip()


def _holding_units(case: FailedCase, probe: Probe, before: int) -> list[str]:
    G = case.G
    units = [u for u in case.stored() if G.nodes[u]["created"] < before and not G.nodes[u].get("deleted")]
    return [u for u in units if probe.holds(u)]


def correction(case: FailedCase, op: str, probe: Probe) -> Any:
    """The oracle-corrected output of ``op`` for this case, or None when no correction applies."""
    G = case.G
    d = G.nodes[op]
    output = copy.deepcopy(d.get("output"))
    operation = d["operation"]
    if operation == "answer":
        return {"answer": case.gold}
    if operation == "chunk" and isinstance(output, list):
        return [*output, {"text": "\n".join(case.evidence_texts), "turns": list(case.evidence)}]
    if stage_of(operation) == "extraction" and isinstance(output, dict):
        for field, value in output.items():
            if field in _EXTRACTION_OUTPUT and isinstance(value, list):
                return {**output, field: [*value, _oracle_text(case)]}
            if field in _EXTRACTION_OUTPUT and isinstance(value, str):
                return {**output, field: f"{value} {_oracle_text(case)}".strip()}
        return None
    if operation == "update" and isinstance(output, dict):
        return _cancel_loss(case, op, output)
    if stage_of(operation) == "retrieval" and operation != "rewrite_query":
        units = _holding_units(case, probe, d["start"]) or [t for t in case.evidence_turns if G.has_edge(t, op)]
        return _with_units(G, output, units) if units else None
    return None


def locally_wrong(case: FailedCase, op: str, probe: Probe, context_holds: bool) -> bool:
    """Whether ``op`` itself lost the information (the answer op is always a suspect)."""
    G = case.G
    d = G.nodes[op]
    stage = stage_of(d["operation"])
    written = [v for v in G.successors(op) if G.nodes[v]["kind"] in CONTENT_KINDS]
    if d["operation"] == "answer":
        return True
    if stage == "extraction":  # the whole extraction stage lost it, and this op is part of it
        return op in case.extractors and not any(probe.holds(v) for e in case.extractors for v in G.successors(e)
                                                 if G.nodes[v]["kind"] in CONTENT_KINDS)
    if stage == "update":
        derived = set(case.stored())
        for v in written:
            if v not in derived or G.nodes[v].get("action") not in ("UPDATE", "DELETE"):
                continue
            previous = f"{G.nodes[v]['name']}@{G.nodes[v]['version'] - 1}"
            if previous in G and probe.holds(previous) and (G.nodes[v].get("deleted") or not probe.holds(v)):
                return True
        return False
    if stage == "retrieval":
        return not context_holds and bool(_holding_units(case, probe, d["start"])
                                          or any(G.has_edge(t, op) for t in case.evidence_turns))
    return False


def _cancel_loss(case: FailedCase, op: str, output: dict[str, Any]) -> dict[str, Any] | None:
    """Turn the op's UPDATEs and DELETEs of evidence-derived units into NONE (new texts kept as ADDs)."""
    G = case.G
    lost = {G.nodes[v]["value"] for v in G.successors(op)
            if G.nodes[v].get("action") in ("UPDATE", "DELETE") and v in set(case.stored())}
    events = output.get("memory") or []
    changed, fixed = False, []
    for event in events:
        if isinstance(event, dict) and event.get("event") in ("UPDATE", "DELETE") and event.get("text") in lost:
            changed = True
            fixed.append({**event, "event": "NONE", "text": event.get("old_memory") or event["text"]})
            if event["event"] == "UPDATE":
                fixed.append({"id": f"oracle-{len(fixed)}", "text": event["text"], "event": "ADD", "old_memory": None})
        else:
            fixed.append(event)
    return {**output, "memory": fixed} if changed else None


def _turn_date(G: nx.DiGraph, session: int) -> str | None:
    for s in G.graph.get("sessions", []):
        if s["index"] == session:
            day = parse_session_date(s["date_time"])
            return format_date(day) if day else s["date_time"]
    return None


def _item(G: nx.DiGraph, node: str) -> dict[str, Any]:
    d = G.nodes[node]
    if d["kind"] == "turn":
        text, date = f"{d['value']['speaker']}: {d['value']['text']}", _turn_date(G, d["value"]["session"])
    else:
        text, date = text_of(d["value"]), d.get("session_date")
    lines = [f"[{date}] {line}" if date else line for line in text.splitlines()]
    return {"ref": node, "text": text, "date": date, "lines": lines, "score": 1.0, "kind": d["kind"]}


def _with_units(G: nx.DiGraph, output: Any, units: list[str]) -> Any:
    """``output`` of a retrieval op with the given units (or turns) added first, in the output's own shape."""
    items = [_item(G, u) for u in units]
    if isinstance(output, dict):
        out = dict(output)
        for item in items:
            key = f"{item['kind']}s" if f"{item['kind']}s" in out else next(iter(out))
            out[key] = [item, *out[key]]
        return out
    if isinstance(output, list) and output and isinstance(output[0], list):
        return [*([i["ref"].split("@")[0].removeprefix("turn:"), i["lines"][0]] for i in items), *output]
    return [*items, *(output or [])]


def candidates(case: FailedCase) -> list[str]:
    """Ops on the evidence's path, oldest first (see the module docstring)."""
    G = case.G
    found = set(case.extractors)
    found |= {next(G.predecessors(v)) for v in case.stored()
              if G.nodes[v].get("action") in ("UPDATE", "DELETE")}
    found |= set(case.retrieval_ops) | {case.answer_op}
    return sorted(found, key=lambda n: G.nodes[n]["start"])


def _rescues(case: FailedCase, op: str, output: Any, judge: Judge) -> tuple[bool, int]:
    from memopt.trace.replay import replay

    result = replay(case.G, {op: output}, cases=[case.key])
    return judge.correct(case.question, case.gold, result.answers[case.key]), result.lm_calls


def counterfactual(case: FailedCase, judge: Judge) -> Attribution:
    """The earliest locally wrong op whose oracle correction rescues the answer (see the module docstring).

    ``details["clean"]`` is True when that op is also the earliest locally wrong one (a single decisive
    fault); the fault-injection bench keeps only clean natural failures as labelled cases.
    """
    started = time.perf_counter()
    probe = Probe(case, judge)
    G = case.G
    context_holds = case.context_var is not None and probe.holds(case.context_var)
    suspects = [case.answer_op] if context_holds or case.unanswerable else candidates(case)
    first_wrong = None
    for op in suspects:
        if not locally_wrong(case, op, probe, context_holds):
            continue
        first_wrong = first_wrong or op
        fixed = correction(case, op, probe)
        if fixed is None:
            continue
        rescued, _ = _rescues(case, op, fixed, judge)
        probe.calls += 1
        if rescued:
            deleted = any(G.nodes[v].get("action") == "DELETE" for v in G.successors(op))
            error = error_of_stage(stage_of(G.nodes[op]["operation"]), deleted=deleted)
            return Attribution(case.case_id, error, op, G.nodes[op]["operation"], (op, case.answer_var),
                               f"correcting {op} rescues the answer", 1.0, probe.calls, True, "counterfactual",
                               time.perf_counter() - started, {"clean": op == first_wrong})
    return Attribution(case.case_id, "ResponseError", case.answer_op, "answer", (case.answer_op,),
                       "no correction rescued the answer", 0.5, probe.calls, False, "counterfactual",
                       time.perf_counter() - started, {"clean": False})


def verify(case: FailedCase, attribution: Attribution, judge: Judge) -> Attribution:
    """``attribution`` with ``verified`` set: does the oracle correction at its op rescue the answer?"""
    probe = Probe(case, judge)
    fixed = correction(case, attribution.op_id, probe)
    if fixed is None:
        return replace(attribution, verified=False, judge_calls=attribution.judge_calls + probe.calls)
    rescued, _ = _rescues(case, attribution.op_id, fixed, judge)
    return replace(attribution, verified=rescued, judge_calls=attribution.judge_calls + probe.calls + 1)
