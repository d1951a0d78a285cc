"""Which question an operation of a smartcomment graph serves, when no edge comes from the question itself.

A question's search reads the question; the ops after it often do not. A rerank reads the units the search found,
a truncation or a window fitting reads the conversation history, a post-filter reads the hit list: the question
appears nowhere in their edges, yet they run for that question and decide what its answer reads. An op is a
question's (`serving_ops`) when

- it started after the question was asked (its first edge is not older than the question node), and
- everything it wrote is read by that question's ops and by no other op (its output serves that question alone),

and it is not an ingestion op (category extraction, update, deletion) and reads no conversation message (an op
that does is memory construction, wherever a writer put its question nodes). Found backwards from the ops already known
to be the question's (those that read the question, or what another op of the question wrote), until nothing
changes. A unit written while ingesting and read by one question only is no question's op: it was written before
the question was asked.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Mapping
from typing import Any

__all__ = ["serving_ops"]


def serving_ops(case_of_op: Mapping[str, str], edges: list[Mapping[str, Any]], written_by: Mapping[str, list[str]],
                asked: Mapping[str, str], categories: Mapping[str, str], ingest: Collection[str],
                messages: Collection[str] = ()) -> dict[str, str]:
    """The ops (not already in ``case_of_op``) that serve one question alone, each → that question's key (see the
    module docstring). ``written_by``: variable → the ops that wrote it; ``asked``: question key → when its node
    was created; ``categories``: op → its category; ``messages``: the conversation's messages."""
    found = dict(case_of_op)
    readers: dict[str, set[str]] = defaultdict(set)
    first: dict[str, str] = {}
    outputs: dict[str, set[str]] = defaultdict(set)
    ingesting = {e["op_id"] for e in edges if e["source_full_node_id"] in messages}
    for e in edges:
        readers[e["source_full_node_id"]].add(e["op_id"])
        first[e["op_id"]] = min(first.get(e["op_id"], e["created_at"]), e["created_at"])
    for variable, ops in written_by.items():
        for op in ops:
            outputs[op].add(variable)
    changed = True
    while changed:
        changed = False
        for op, written in outputs.items():
            if op in found or op in ingesting or str(categories.get(op) or "").lower() in ingest:
                continue
            served = {r for v in written for r in readers.get(v, ())} - {op}
            keys = {found.get(r) for r in served}
            if len(keys) != 1 or None in keys:
                continue
            (key,) = keys
            if key in asked and first.get(op, "") >= asked[key]:
                found[op] = key
                changed = True
    return {op: key for op, key in found.items() if op not in case_of_op}
