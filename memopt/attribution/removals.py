"""What an op did to a unit, read from its versions: a list that only lost items, an extraction that came out
empty, a unit retired by design after consolidation (`memtrace` decides a loss's type with them)."""

from __future__ import annotations

import json
from collections.abc import Callable

import networkx as nx

from memopt.attribution.normalise import plain
from memopt.core.text import overlap
from memopt.trace.graph import op_stages, steering_ops
from memopt.trace.tombstones import is_tombstone

__all__ = ["emptied", "removed_item", "retired_unit"]


def emptied(G: nx.DiGraph, op: str) -> bool:
    """Whether an op its system declares to extract content (stage extraction, steering no other op) wrote
    nothing at all: its extraction came out empty (an episode of ``""``), which is the loss itself, not an op that
    writes nothing by nature (a segmenter steering the extractors)."""
    name = G.nodes[op]["operation"]
    return (next(iter(G.successors(op)), None) is None and name in (G.graph.get("operations") or {})
            and "extraction" in op_stages(G, op) and name not in steering_ops(G))


def retired_unit(G: nx.DiGraph, unit: str, after: str, querying: set[str]) -> bool:
    """Whether a unit's delete is its designed retirement after consolidation (a daily note compacted into the
    memory file the questions search, then archived): the deleting op read nothing but the unit (no new fact, no
    plan decided it), and an earlier op read the unit and wrote another unit a question reads."""
    deleter = next(iter(G.predecessors(after)), None)
    call = G.nodes[deleter].get("sc_op_id") if deleter is not None else None
    parts = [op for op in G if G.nodes[op].get("sc_op_id") == call] if call is not None else [deleter]
    if deleter is None or {v for op in parts for v in G.predecessors(op)} != {unit}:
        return False
    asked = {v for op in querying for v in G.predecessors(op) if "action" in G.nodes[v]}
    start = G.nodes[deleter]["start"]
    return any(G.nodes[op]["start"] < start and w in asked and G.nodes[w]["name"] != G.nodes[unit]["name"]
               for op in G.successors(unit) for w in G.successors(op))


def _item_id(item: object) -> str | None:
    if isinstance(item, dict):
        found = next((item[k] for k in ("id", "memory_id", "uuid", "key") if k in item), None)
        return None if found is None else str(found)
    return None


def _live_items(value: object) -> object:
    """A list's items, or the items of a record holding one list (``{"items": [...]}``, a scratchpad), or the
    entries of a state keyed by fact (``{"move": ..., "kids": ...}``), less the ones marked deleted in place
    (``"deleted": true``); other values as they are."""
    if isinstance(value, dict):
        lists = [v for v in value.values() if isinstance(v, list)]
        if len(lists) == 1:
            value = lists[0]
        elif not lists and value and all(isinstance(v, str | dict) for v in value.values()):
            value = [{"key": k, "value": v} for k, v in value.items()]  # a state keyed by fact: each key an item
    if not isinstance(value, list):
        return value
    return [i for i in value if not (isinstance(i, dict) and is_tombstone(i))]


def _restated(before: object, after: object) -> bool:
    """Whether a record holding one list was rewritten beside its list: the new version writes a statement (a
    field of three words or more) the old one did not have, as a profile patch that empties a list while noting
    why does; what it cleared was revised, not removed."""
    if not (isinstance(before, dict) and isinstance(after, dict)):
        return False
    if sum(isinstance(v, list) for v in after.values()) != 1:
        return False
    return any(isinstance(v, str) and len(v.split()) >= 3 and before.get(k) != v for k, v in after.items())


def removed_item(before: object, after: object, holds: Callable[[object], bool] = lambda item: True) -> bool:
    """Whether a new version of a list (a store's snapshot, a memory list, a state keyed by fact) only removed items
    from the old one: every item it no longer has (of those that ``holds`` the piece, when items have ids and some
    do) is gone, not rewritten (no item of the new version has its id, or, without ids, its words)."""
    if _restated(before, after):
        return False
    before, after = _live_items(before), _live_items(after)
    if not (isinstance(before, list) and isinstance(after, list)):
        return False
    def key(item: object) -> str:
        return json.dumps(item, sort_keys=True, default=str)

    old, new = {key(i) for i in before}, {key(i) for i in after}
    gone = [i for i in before if key(i) not in new]
    added = [i for i in after if key(i) not in old]
    if not gone:
        return False
    if all(_item_id(i) is not None for i in [*gone, *added]):
        lost = [i for i in gone if holds(i)] or gone  # the items that held the piece decide, when some did
        return not {_item_id(i) for i in lost} & {_item_id(i) for i in added}
    return all(overlap(plain(g), plain(a)) < 0.5 for g in gone for a in added)
