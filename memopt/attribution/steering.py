"""Query-time ops that steer retrieval without searching themselves: a router whose plan names the sources a search
reads (layers, tiers, collections), and an agentic check that judges the hits enough and so stops further rounds.

When a search read faithfully what such an op sent it to, the op that chose is where the piece was lost:

- a **plan** a search read (a value written by an earlier op of the question that names no unit: ``{"layers":
  ["core"]}``) leaves out a unit holding the piece when no word of the unit's name is among the plan's words while
  every unit the search read has one;
- a **check** that wrote a verdict saying enough (a record with a true flag: ``{"sufficient": true}``) after reading
  the hits of the question, with no search after it, stopped retrieval while a piece was missing.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import networkx as nx

from memopt.attribution.normalise import plain
from memopt.trace.graph import ops_in_order

__all__ = ["router_of", "stopped_early"]

_SPLIT = re.compile(r"[:@/#.\s]+")


def _name_words(G: nx.DiGraph, node: str) -> set[str]:
    return {w.lower() for w in _SPLIT.split(str(G.nodes[node].get("name") or node)) if w}


def _plan_words(value: object) -> set[str]:
    return {w.lower() for line in plain(value).splitlines() for w in re.split(r"[\s,;]+", line) if w}


def router_of(G: nx.DiGraph, search: str, retrieval: list[str], candidates: list[str],
              holds: Callable[[str], bool]) -> str | None:
    """The earlier retrieval op of the question whose plan ``search`` read and which left out every stored unit
    among ``candidates`` that ``holds`` a piece (asked only once a plan is found), or None."""
    read_units = [v for v in G.predecessors(search) if "action" in G.nodes[v]]
    for plan in G.predecessors(search):
        writer = next(iter(G.predecessors(plan)), None)
        if writer not in retrieval or writer == search or "action" in G.nodes[plan] or G.nodes[plan].get("refs"):
            continue
        words = _plan_words(G.nodes[plan].get("value"))
        if not words or not read_units or not all(_name_words(G, u) & words for u in read_units):
            continue
        held = [u for u in candidates if u not in read_units and "action" in G.nodes[u] and holds(u)]
        if held and not any(_name_words(G, u) & words for u in held):
            return writer
    return None


def _says_enough(value: object) -> bool:
    return isinstance(value, dict) and any(v is True for v in value.values())


def stopped_early(G: nx.DiGraph, lost: list[str], retrieval: list[str]) -> str | None:
    """The check among ``lost`` (retrieval ops that did not carry every piece) that read other retrieval ops' hits
    and said enough, no search of the question running after it; None when there is none."""
    order = {op: i for i, op in enumerate(ops_in_order(G))}
    for op in lost:
        if not any(_says_enough(G.nodes[w].get("value")) for w in G.successors(op)):
            continue
        read_hits = any(next(iter(G.predecessors(v)), None) in retrieval for v in G.predecessors(op))
        later = [r for r in retrieval if order[r] > order[op]]
        if read_hits and not any(any("action" in G.nodes[v] for v in G.predecessors(r)) for r in later):
            return op
    return None
