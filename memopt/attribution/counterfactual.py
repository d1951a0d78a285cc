"""The ``counterfactual`` method: find (or verify) the cause by replaying with an oracle correction.

For a candidate op, an oracle correction is applied to its recorded output and the conversation is
replayed (`memopt.trace.replay`: upstream served from the replay cache, downstream run again). What
a correction does follows the op's declared stage(s) (`memopt.trace.graph.op_stages`) and the
shape of its output, never its name:

- extraction op (extract, facts, episode, chunk): add the evidence turns, with the gold answer, to
  its content (a list of chunks, a ``facts`` / ``summary`` / ``updated_profile`` field, or a text);
- update / deletion op: cancel the UPDATE / DELETE events (Mem0's schema) that degraded or removed the
  unit, keeping the new fact as an ADD; an op whose output is the unit's new text gets the evidence
  added to it;
- retrieval op (retrieve, fuse, truncate; not an op that only steers one, like rewrite_query): put
  the unit that held the information into its output;
- response op: answer with the gold.

The cause is the earliest candidate that is locally wrong at one of its stages (it lost the
information: an extraction op whose outputs do not hold it, an update op that degraded or deleted a
unit holding it, a retrieval op whose context lacks it while the store held it; the response op
always qualifies) and whose
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

from memopt.attribution.case import FailedCase, Probe, is_content, text_of
from memopt.attribution.types import Attribution
from memopt.core.text import format_date, parse_session_date
from memopt.judge.judges import Judge
from memopt.taxonomy import error_of_stage
from memopt.trace.graph import op_stages

__all__ = ["counterfactual", "verify", "correction", "candidates", "locally_wrong", "with_units"]

_CONTENT_OUTPUT = frozenset({"facts", "summary", "updated_profile"})


def _oracle_text(case: FailedCase) -> str:
    evidence = " ".join(case.evidence_texts)
    return f"{evidence} ({case.gold})".strip()


def _holding_units(case: FailedCase, probe: Probe, before: int) -> list[str]:
    G = case.G
    units = [u for u in case.stored() if G.nodes[u]["created"] < before and not G.nodes[u].get("deleted")]
    return [u for u in units if probe.holds(u)]


def _with_oracle(case: FailedCase, output: Any) -> Any:
    """``output`` with the evidence (and the gold) added to its content, or None when it has no content."""
    if isinstance(output, list) and all(isinstance(item, dict) and "turns" in item for item in output):
        return [*output, {"text": "\n".join(case.evidence_texts), "turns": list(case.evidence)}]
    if isinstance(output, str):
        return f"{output} {_oracle_text(case)}".strip()
    if isinstance(output, dict):
        for field, value in output.items():
            if field in _CONTENT_OUTPUT and isinstance(value, list):
                return {**output, field: [*value, _oracle_text(case)]}
            if field in _CONTENT_OUTPUT and isinstance(value, str):
                return {**output, field: f"{value} {_oracle_text(case)}".strip()}
    return None


def correction(case: FailedCase, op: str, probe: Probe) -> Any:
    """The oracle-corrected output of ``op`` for this case, or None when no correction applies."""
    G = case.G
    d = G.nodes[op]
    output = copy.deepcopy(d.get("output"))
    stages = op_stages(G, op)
    if "response" in stages:
        return {**(output if isinstance(output, dict) else {}), "answer": case.gold}
    if "extraction" in stages:
        return _with_oracle(case, output)
    if {"update", "deletion"} & set(stages):
        if isinstance(output, dict) and isinstance(output.get("memory"), list):
            return _cancel_loss(case, op, output)
        return _with_oracle(case, output)
    if "retrieval" in stages and op in case.retrieval_ops:
        units = _holding_units(case, probe, d["start"]) or [t for t in case.evidence_turns if G.has_edge(t, op)]
        return with_units(G, output, units) if units else None
    return None


def _wrong_stage(case: FailedCase, op: str, probe: Probe, context_holds: bool) -> str | None:
    """The first declared stage at which ``op`` itself lost the information (None when it did not)."""
    G = case.G
    d = G.nodes[op]
    for stage in op_stages(G, op):
        if stage == "response":
            return stage
        if stage == "extraction" and op in case.extractors and not any(
                probe.holds(v) for e in case.extractors for v in G.successors(e) if is_content(G, v)):
            return stage  # the whole extraction stage lost it, and this op is part of it
        if stage in ("update", "deletion"):
            derived = set(case.stored())
            for v in G.successors(op):
                if v not in derived or G.nodes[v].get("action") not in ("UPDATE", "DELETE"):
                    continue
                previous = f"{G.nodes[v]['name']}@{G.nodes[v]['version'] - 1}"
                if previous in G and probe.holds(previous) and (G.nodes[v].get("deleted") or not probe.holds(v)):
                    return stage
        if stage == "retrieval" and not context_holds and (
                _holding_units(case, probe, d["start"]) or any(G.has_edge(t, op) for t in case.evidence_turns)):
            return stage
    return None


def locally_wrong(case: FailedCase, op: str, probe: Probe, context_holds: bool) -> bool:
    """Whether ``op`` itself lost the information at one of its stages (the response op is always a suspect)."""
    return _wrong_stage(case, op, probe, context_holds) is not None


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


def with_units(G: nx.DiGraph, output: Any, units: list[str]) -> Any:
    """``output`` of a retrieval op with the given units (or turns) added first, in the output's own shape (a list
    of items or of ``[id, line]`` pairs, a dict of such lists, a text); None for a shape it cannot extend."""
    items = [_item(G, u) for u in units]
    if isinstance(output, str):
        return "\n".join([*(line for i in items for line in i["lines"]), output]).strip()
    if isinstance(output, dict):
        out = dict(output)
        for item in items:
            key = f"{item['kind']}s" if f"{item['kind']}s" in out else next(iter(out), None)
            if key is None or not isinstance(out[key], list):
                return None
            out[key] = [item, *out[key]]
        return out
    if isinstance(output, list) and output and isinstance(output[0], list):
        return [*([i["ref"].split("@")[0].removeprefix("turn:"), i["lines"][0]] for i in items), *output]
    if output is None or isinstance(output, list):
        return [*items, *(output or [])]
    return None


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
        stage = _wrong_stage(case, op, probe, context_holds)
        if stage is None:
            continue
        first_wrong = first_wrong or op
        fixed = correction(case, op, probe)
        if fixed is None:
            continue
        rescued, _ = _rescues(case, op, fixed, judge)
        probe.calls += 1
        if rescued:
            deleted = any(G.nodes[v].get("action") == "DELETE" for v in G.successors(op))
            error = error_of_stage("update" if stage == "deletion" else stage, deleted=deleted)
            return Attribution(case.case_id, error, op, G.nodes[op]["operation"], (op, case.answer_var),
                               f"correcting {op} rescues the answer", 1.0, probe.calls, True, "counterfactual",
                               time.perf_counter() - started, {"clean": op == first_wrong})
    return Attribution(case.case_id, "ResponseError", case.answer_op, G.nodes[case.answer_op]["operation"],
                       (case.answer_op,),
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
