"""The op that decided a delete or an overwrite another op carried out.

Systems often split a change to memory in two: an LLM plans it (a reconcile plan, a list of edges to invalidate,
``HDEL key field`` commands, a tool call) and an executor applies the plan as written (``apply_plan``,
``redis.exec``, ``apply_invalidations``, the tool). The executor is faithful; the decision was the plan's. So the
op blamed for a unit's delete or overwrite is the op that wrote a plan the executor read and that names the unit
(its name, in the plan's text, as a run of the same words: ``u88.reminders.tue`` in ``HDEL u88:reminders tue``),
when that op is not the executor itself (the ops of one traced call share its ``sc_op_id``).
"""

from __future__ import annotations

import re

import networkx as nx

from memopt.attribution.normalise import plain

__all__ = ["deciding_op"]

_WORDS = re.compile(r"[a-z0-9]+")


def _unit_words(G: nx.DiGraph, unit: str) -> list[str]:
    d = G.nodes[unit]
    sc_id = str(d.get("sc_id") or "").rpartition("@")[0]
    name = sc_id.removeprefix(f"{d.get('sc_class')}:") if sc_id and d.get("sc_class") else str(d["name"])
    return _WORDS.findall(name.rsplit(":", 1)[-1].lower() if not sc_id else name.lower())


def _names(text: str, words: list[str]) -> bool:
    found = _WORDS.findall(text.lower())
    n = len(words)
    return n > 0 and any(found[i:i + n] == words for i in range(len(found) - n + 1))


def deciding_op(G: nx.DiGraph, executor: str, unit: str) -> str:
    """The op whose plan ``executor`` applied to ``unit`` (see the module docstring); ``executor`` when none."""
    call = G.nodes[executor].get("sc_op_id") or executor
    mine = [op for op in G if G.nodes[op].get("sc_op_id") == call] if G.nodes[executor].get("sc_op_id") else [
        executor]
    words = _unit_words(G, unit)
    start = G.nodes[executor]["start"]
    for op in mine:
        for plan in G.predecessors(op):
            d = G.nodes[plan]
            if "action" in d or d.get("kind") in ("turn", "question"):
                continue
            author = next(iter(G.predecessors(plan)), None)
            if author is None or (G.nodes[author].get("sc_op_id") or author) == call:
                continue
            if G.nodes[author]["start"] < start and _names(plain(d.get("value")), words):
                return author
    return executor
