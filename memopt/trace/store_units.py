"""Which smartcomment variables are memory-store units, by the role they play in the graph, not by their category.

``memory_entry`` is one writer's category for a store unit; others keep theirs under ``semantic_memory``,
``episodic_memory``, ``memory_file``, ``profile_slot``, ``note``, ``kv_entry``... A variable whose role is not
already known (not a message, question, prediction, context, prompt, gold, judgement or marker) is a store unit
when, for any of its versions:

- an edge goes from it into a DELETE marker (the marker may be shared by several deletes and ops), unless another
  source of that op's edges into the marker is already a unit (``memory_entry``: it is what was deleted, the rest
  is what the op read) or it is an LLM's output (``llm_response``: a decision) or the op's own output, or the
  marker is another source's own next version (a key store's ``(nil)`` field: that source is the unit); or a DELETE
  marker no unit points at is named after it (`memopt.trace.tombstones.unit_named`);
- a later version of it is written by another op that read an earlier one (an overwrite: ``unit@1 → unit@2``),
  and no other unit derives from it (a message buffer an op mutates and empties into documents or chunks is a
  staging area, not a unit);
- a question's op reads it: an edge from the question into it (the search found it) or from it into what the
  question's op wrote (a result list, a context), when an op before the question wrote it.

Every version of such a variable (its ``class:name``) is then read as a unit (kind ``memory``), and so is every
variable written the way one was (first written by an op of the same name, with the same class and category: the
document of an index no question happened to search for is a unit of that index as much as those it returned).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from memopt.trace.tombstones import unit_named

__all__ = ["store_unit_names"]


def store_unit_names(nodes: Mapping[str, Mapping[str, Any]], kinds: Mapping[str, str | None],
                     edges: list[Mapping[str, Any]], writer: Mapping[str, str],
                     question_ops: Iterable[str], op_names: Mapping[str, str] | None = None) -> set[str]:
    """The ``class:name`` of each variable that plays a store unit's role (see the module docstring); ``kinds``
    holds None for a variable whose role its category and class do not say, ``writer`` the op that first wrote
    each variable, ``question_ops`` the ops of the graph's questions, ``op_names`` each op's name."""
    asked = set(question_ops)
    open_ = {fid for fid, kind in kinds.items() if kind is None and writer.get(fid) not in asked}
    found: set[str] = set()
    overwritten: set[str] = set()
    into_marker: dict[tuple[str, str], set[str]] = defaultdict(set)  # (op, marker) → the sources of its edges
    for e in edges:
        s, t, op = e["source_full_node_id"], e["target_full_node_id"], e["op_id"]
        if kinds.get(t) == "marker" and s in nodes:
            into_marker[(op, t)].add(s)
        if s in open_ and t in open_ and _overwrite(nodes[s], nodes[t], writer, op):
            overwritten.add(nodes[t]["full_name"])
        read = s if s in open_ else t if t in open_ and kinds.get(s) == "question" else None
        if op in asked and read is not None and read in writer:  # not an input no op wrote (a system prompt)
            found.add(nodes[read]["full_name"])
    for (op, marker), sources in into_marker.items():
        own = {s for s in sources if nodes[s]["full_name"] == nodes[marker]["full_name"]}  # its next version
        if not any(kinds.get(s) == "memory" for s in sources):
            found |= {nodes[s]["full_name"] for s in (own or sources) if s in open_ and writer.get(s) != op
                      and str(nodes[s].get("category") or "").lower() != "llm_response"}
    staging = _upstream(nodes, edges, {fid for fid, n in nodes.items()
                                       if kinds.get(fid) == "memory" or n["full_name"] in found})
    found |= overwritten - staging
    pointed = {t for (_, t), sources in into_marker.items()
               if any(kinds.get(s) == "memory" or nodes[s]["full_name"] in found for s in sources)}
    by_name: dict[str, str] = {}
    for fid in open_:
        by_name.setdefault(str(nodes[fid]["full_name"]), str(nodes[fid]["name"]))
    for fid, kind in kinds.items():
        if kind == "marker" and fid not in pointed:
            named = unit_named(nodes[fid], by_name)
            found |= {named} if named is not None else set()
    return found | _siblings(nodes, open_, found, writer, op_names or {})


def _siblings(nodes: Mapping[str, Mapping[str, Any]], open_: set[str], units: set[str], writer: Mapping[str, str],
              op_names: Mapping[str, str]) -> set[str]:
    """The ``class:name`` of every variable written the way a unit was (an op of the same name, the same class and
    category): the documents of an index a question's search happened not to return are units of that index."""
    def kind(fid: str) -> tuple[str, str, str] | None:
        op = writer.get(fid)
        name = op_names.get(op) if op is not None else None
        return (name, str(nodes[fid].get("class_name") or ""), str(nodes[fid].get("category") or "")) if name else None

    made = {kind(fid) for fid in open_ if nodes[fid]["full_name"] in units} - {None}
    return {nodes[fid]["full_name"] for fid in open_ if int(nodes[fid]["version"]) == 1 and kind(fid) in made}


def _overwrite(old: Mapping[str, Any], new: Mapping[str, Any], writer: Mapping[str, str], op: str) -> bool:
    """Whether ``op`` read a version of a variable and wrote a later version of it, and another op wrote the one
    it read."""
    return (old["full_name"] == new["full_name"] and int(new["version"]) > int(old["version"])
            and writer.get(new["full_node_id"]) == op and writer.get(old["full_node_id"]) not in (None, op))


def _upstream(nodes: Mapping[str, Mapping[str, Any]], edges: list[Mapping[str, Any]], units: set[str]) -> set[str]:
    """The ``class:name`` of every variable another variable's units derive from (a unit's own earlier versions
    are not counted)."""
    parents: dict[str, set[str]] = defaultdict(set)
    for e in edges:
        s, t = e["source_full_node_id"], e["target_full_node_id"]
        if s in nodes and t in nodes and nodes[s]["full_name"] != nodes[t]["full_name"]:
            parents[t].add(s)
    seen, stack = set(units), list(units)
    while stack:
        for parent in parents.get(stack.pop(), ()):
            if parent not in seen:
                seen.add(parent)
                stack.append(parent)
    return {nodes[fid]["full_name"] for fid in seen - units}
