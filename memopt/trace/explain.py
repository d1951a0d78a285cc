"""Why a case failed, in plain words: the blamed step, the evidence it lost (quoted), what it produced instead.

`plain_reason` turns an `Attribution` and its conversation's graph into a few sentences a reader
needs no graph ids for: which step (operation and session) is blamed and what went wrong there, the
evidence turn quoted, the memory that held the answer and what the step wrote or returned instead,
and the question with the expected and the given answer. Quotes are cut at `QUOTE` characters.
Without the graph it falls back to the attribution's own reason.
"""

from __future__ import annotations

import json
from typing import Any

import networkx as nx

__all__ = ["plain_reason", "QUOTE"]

QUOTE = 160
_WHAT = {
    "ExtractionError": "the needed information never made it into any fact or memory",
    "UpdateError": "a memory that held the answer was overwritten",
    "DeletionError": "a memory that held the answer was deleted",
    "RetrievalError": "the store held the answer, but it did not reach the answer's context",
    "ResponseError": "the answer step had what it needed but answered wrong",
}


def _quote(value: Any) -> str:
    if isinstance(value, dict) and len(value) == 1:  # {"facts": [...]}: the list
        value = next(iter(value.values()))
    if isinstance(value, dict) and "text" in value:
        value = value["text"]
    if isinstance(value, list):
        value = "; ".join(str(v.get("text", v)) if isinstance(v, dict) else str(v) for v in value)
    elif not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(str(value).split())
    return f"“{text if len(text) <= QUOTE else text[:QUOTE - 1] + '…'}”"


def _where(op_id: str) -> str:
    key = op_id.rsplit(":", 1)[-1]
    return f"session {key}" if key[:1] == "S" and key[1:2].isdigit() else f"question {key}"


def _variables(G: nx.DiGraph, path: tuple[str, ...]) -> list[str]:
    return [n for n in path if n in G and G.nodes[n].get("type") == "variable"]


def plain_reason(attribution: Any, G: nx.DiGraph | None, result: Any = None) -> str:
    """A few sentences on why the case failed (see the module docstring)."""
    a = attribution
    if G is None or a.op_id not in G:
        return a.reason
    step = f"The {a.operation} step ({_where(a.op_id)})"
    lines = [f"{step} is blamed: {_WHAT.get(a.error_type, a.error_type)}."]
    variables = _variables(G, a.evidence_path)
    turns = [n for n in variables if G.nodes[n].get("kind") == "turn"]
    if turns:
        lines.append(f"Evidence ({G.nodes[turns[0]]['name'].removeprefix('turn:')}): "
                     f"{_quote(G.nodes[turns[0]].get('value'))}.")
    held = [n for n in variables if G.nodes[n].get("kind") not in ("turn", "context", "answer")]
    output = G.nodes[a.op_id].get("output")
    if a.error_type in ("UpdateError", "DeletionError") and held:
        lines.append(f"A memory held it: {_quote(G.nodes[held[0]].get('value'))}.")
        if a.error_type == "DeletionError":
            lines.append(f"{step} deleted it.")
        elif len(held) > 1:
            lines.append(f"{step} replaced it with {_quote(G.nodes[held[-1]].get('value'))}.")
        else:
            lines.append(f"{step} never stored it; it produced {_quote(output)}.")
    elif a.error_type == "RetrievalError" and held:
        lines.append(f"The store held it: {_quote(G.nodes[held[0]].get('value'))}; {step.lower()[0] + step[1:]} "
                     f"returned instead {_quote(output)}.")
    elif a.error_type == "ExtractionError" and output is not None:
        lines.append(f"What it produced instead: {_quote(output)}.")
    if result is not None:
        lines.append(f"Question {_quote(result.question)}: expected {_quote(result.gold)}, answered "
                     f"{_quote(result.prediction)}.")
    return " ".join(lines)
