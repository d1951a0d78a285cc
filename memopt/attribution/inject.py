"""Fault injection: turn a correctly answered case into a failure with a known cause.

Each fault rewrites one or more recorded op outputs; the conversation is then replayed (downstream
ops run again) and the case is kept only if it now fails and the fault had the effect its label
names (`effective`: e.g. after a retrieval fault the context no longer holds the information).
The label is (error type, op id):

- ``drop_evidence`` (ExtractionError): remove what holds the information from the outputs of the
  ops that extracted it from the evidence turns (facts, episode sentences, chunks); the label is
  the earliest op that extracted from an evidence turn (once the whole stage lost the information,
  correcting that op rescues the answer);
- ``overwrite_update`` (UpdateError, Mem0): in a later update decision that sees the unit holding the
  information, turn an ADD into an UPDATE that overwrites that unit (or add such an UPDATE);
- ``delete_unit`` (DeletionError, Mem0): add a DELETE of that unit to a later update decision;
- ``drop_retrieved`` (RetrievalError): remove what holds the information from the output of the
  retrieval op that writes the context (retrieve, truncate, fuse);
- ``replace_answer`` (ResponseError): replace the answer op's output by a wrong answer.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from typing import Any

from memopt.attribution.case import FailedCase, Probe, text_of
from memopt.data.model import NOT_MENTIONED
from memopt.trace.graph import op_stages, versions_of

__all__ = ["Injection", "injections", "effective", "FAULTS"]

FAULTS = ("drop_evidence", "overwrite_update", "delete_unit", "drop_retrieved", "replace_answer")


@dataclass(frozen=True)
class Injection:
    """One fault: the outputs to override, and the label it should be attributed to."""

    fault: str
    error_type: str
    op_id: str
    overrides: dict[str, Any]


def _drop_holding(case: FailedCase, probe: Probe, op: str) -> Any:
    """The output of an extraction op without what holds the information (None when nothing changes)."""
    output = copy.deepcopy(case.G.nodes[op]["output"])
    if isinstance(output, list):  # chunk: [{"text", "turns"}]
        kept = [c for c in output if not set(c.get("turns", ())) & set(case.evidence)]
        return kept if len(kept) < len(output) else None
    if not isinstance(output, dict):
        return None
    changed = False
    for field, value in output.items():
        if isinstance(value, list):
            kept = [v for v in value if not (isinstance(v, str) and probe.holds_text(v))]
            changed |= len(kept) < len(value)
            output[field] = kept
        elif isinstance(value, str) and field != "boundaries":
            sentences = re.split(r"(?<=[.!?])\s+", value)
            kept_text = " ".join(s for s in sentences if not probe.holds_text(s))
            changed |= kept_text != value
            output[field] = kept_text
    return output if changed else None


def _drop_evidence(case: FailedCase, probe: Probe) -> Injection | None:
    overrides = {op: out for op in case.extractors if (out := _drop_holding(case, probe, op)) is not None}
    if not overrides:
        return None
    return Injection("drop_evidence", "ExtractionError", case.extractors[0], overrides)


def _holding_unit(case: FailedCase, probe: Probe) -> str | None:
    G = case.G
    asked = G.nodes[case.retrieval_ops[0] if case.retrieval_ops else case.answer_op]["start"]
    for unit in case.stored():
        d = G.nodes[unit]
        newest = versions_of(G, d["name"])[-1]
        if newest == unit and not d.get("deleted") and d["created"] < asked and probe.holds(unit):
            return unit
    return None


def _later_update_seeing(case: FailedCase, unit: str) -> tuple[str, str] | None:
    """A later op of stage ``update`` whose existing memories (Mem0's schema) include ``unit``, and the unit's
    local id there."""
    G = case.G
    text = G.nodes[unit]["value"]
    for op in case.ops_before(case.answer_op):
        d = G.nodes[op]
        if "update" not in op_stages(G, op) or d["start"] <= G.nodes[unit]["created"]:
            continue
        try:
            memories = json.loads(d["inputs"].get("existing_memories") or "[]")
        except json.JSONDecodeError:
            continue
        for memory in memories:
            if memory.get("text") == text:
                return op, str(memory["id"])
    return None


def _update_fault(case: FailedCase, probe: Probe, delete: bool) -> Injection | None:
    unit = _holding_unit(case, probe)
    found = _later_update_seeing(case, unit) if unit else None
    if found is None:
        return None
    op, local = found
    output = copy.deepcopy(case.G.nodes[op]["output"])
    events = [e for e in output.get("memory") or [] if e.get("id") != local]
    text = case.G.nodes[unit]["value"]
    if delete:
        events.append({"id": local, "text": text, "event": "DELETE", "old_memory": None})
        return Injection("delete_unit", "DeletionError", op, {op: {**output, "memory": events}})
    adds = [e for e in events if e.get("event") == "ADD"]
    new_text = adds[0]["text"] if adds else next(iter(case.G.nodes[op]["inputs"].get("new_facts") or []), None)
    if not new_text or probe.holds_text(new_text):
        return None
    events = [e for e in events if e is not (adds[0] if adds else None)]
    events.append({"id": local, "text": new_text, "event": "UPDATE", "old_memory": text})
    return Injection("overwrite_update", "UpdateError", op, {op: {**output, "memory": events}})


def _drop_retrieved(case: FailedCase, probe: Probe) -> Injection | None:
    if case.context_op is None:
        return None
    op = case.context_op
    output = copy.deepcopy(case.G.nodes[op]["output"])

    def holds(item: Any) -> bool:
        if isinstance(item, list):  # truncate: [dia_id, line]
            return item[0] in case.evidence
        text = item.get("text") or "\n".join(item.get("lines") or [])
        return probe.raw_holds(text) or probe.holds_text(text_of(text))

    if isinstance(output, dict):
        kept = {k: [i for i in v if not holds(i)] for k, v in output.items()}
        changed = sum(map(len, kept.values())) < sum(map(len, output.values()))
    elif isinstance(output, list):
        kept = [i for i in output if not holds(i)]
        changed = len(kept) < len(output)
    else:
        return None
    return Injection("drop_retrieved", "RetrievalError", op, {op: kept}) if changed else None


def _replace_answer(case: FailedCase) -> Injection:
    wrong = NOT_MENTIONED
    if case.unanswerable:
        context = text_of(case.G.nodes[case.context_var]["value"]) if case.context_var else ""
        names = [w for w in re.findall(r"\b[A-Z][a-z]{2,}\b", context) if w not in case.question]
        wrong = names[0] if names else "yes"
    return Injection("replace_answer", "ResponseError", case.answer_op, {case.answer_op: {"answer": wrong}})


def effective(injection: Injection, faulted: FailedCase, probe: Probe) -> bool:
    """Whether a fault produced the condition its label names (checked on the replayed graph)."""
    if injection.error_type == "ResponseError":
        return True
    if faulted.context_var is not None and probe.holds(faulted.context_var):
        return False
    if injection.error_type == "ExtractionError":
        return not any(probe.holds(u) for u in faulted.stored())
    return True


def injections(case: FailedCase, probe: Probe) -> list[Injection]:
    """Every fault that applies to this (correctly answered) case."""
    found = [_drop_evidence(case, probe), _update_fault(case, probe, delete=False),
             _update_fault(case, probe, delete=True), _drop_retrieved(case, probe)]
    if not case.unanswerable:
        found = [i for i in found if i is not None]
    else:
        found = []
    return [*found, _replace_answer(case)]
