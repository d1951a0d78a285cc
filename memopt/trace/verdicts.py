"""Whether a graph's judges judged each question's answer right.

A judge writes a score (``0`` / ``1``, ``"0.0"``), a word (``CORRECT`` / ``WRONG``, ``PASS`` / ``FAIL``), or a
record holding one (``{"score": 0, "label": "WRONG", "reasoning": ...}``), from the question directly or through an
earlier judgement (MemBase's ``judge_response`` WRONG → ``judge_score`` 0: the last step is the judge's word). A
question may have several judges (two LLM judges, an LLM judge and a metric): each judge op has one vote (its
``judge_score`` when it wrote one), and the answer is right when more of them say right than wrong, so a split
vote is a failure to look at. With no judge op, an eval harness's score in the answer's own metadata (``{"eval":
{"score": 0}}``) is the verdict.
"""

from __future__ import annotations

import re
from typing import Any

import networkx as nx

__all__ = ["verdict_of", "verdicts"]

# a judge's word, also as teams write it in their own language (German, French, Spanish, Portuguese, Italian)
_RIGHT = frozenset({"CORRECT", "RIGHT", "TRUE", "YES", "PASS", "PASSED", "ACCEPT", "ACCEPTED", "GOOD", "RICHTIG",
                    "KORREKT", "WAHR", "VRAI", "CORRECTO", "CORRETO", "CERTO", "GIUSTO", "CORRETTO"})
_WRONG = frozenset({"WRONG", "INCORRECT", "FALSE", "NO", "FAIL", "FAILED", "REJECT", "REJECTED", "BAD", "FALSCH",
                    "INKORREKT", "FAUX", "INCORRECTO", "INCORRETO", "ERRADO", "SBAGLIATO", "ERRATO"})
_PAIR = re.compile(r"^\s*([A-Za-z_][\w ]{0,30}?)\s*[=:]\s*(\S+)\s*$")
_KEYS = ("score", "judge_score", "verdict", "label", "correct", "is_correct", "passed", "pass", "result", "grade",
         "note", "punkte", "puntos", "punteggio", "pontuacao")  # a score, also as teams abroad name it


def verdict_of(value: Any) -> bool | None:
    """A judge's output as right (True) or wrong (False); None when it says neither."""
    if isinstance(value, dict):
        for key in _KEYS:
            if key in value and (found := verdict_of(value[key])) is not None:
                return found
        # under keys no judge vocabulary names: a record of one value is that value's verdict ({"urteil": "falsch"},
        # {"seikai": false}); of several, a judge's word decides when every value agrees ({"urteil": "falsch",
        # "punkte": 0}), so a memory item with a flag ({"memory": ..., "is_active": false}) is none
        if len(value) == 1:
            only = next(iter(value.values()))
            return verdict_of(only) if isinstance(only, str | int | float | bool) else None
        words = [v for v in value.values() if isinstance(v, str) and _word(v)]
        said = {verdict_of(v) for v in value.values() if isinstance(v, str | int | float | bool)}
        whole = all(isinstance(v, str | int | float | bool) for v in value.values())
        return said.pop() if words and whole and len(said) == 1 else None
    if isinstance(value, bool):
        return value
    text = str(value).strip().strip('"').upper()
    pair = _PAIR.match(text)
    if pair and (pair.group(1).strip().lower() in _KEYS or _word(pair.group(2))):  # "score=0", "veredicto: INCORRECTO"
        text = pair.group(2).strip('"').upper()
    if text in _RIGHT:
        return True
    if text in _WRONG:
        return False
    try:
        return float(text) >= 0.5
    except ValueError:
        return None


def _word(text: str) -> bool:
    """Whether a text is a judge's word (``falsch``, ``PASS``), not a number."""
    return text.strip().strip('"').upper() in _RIGHT | _WRONG


def _question(G: nx.DiGraph, node: str) -> str | None:
    """The key of the question a judgement was made from (directly, or through earlier judgements)."""
    seen, stack = {node}, [node]
    while stack:
        for op in G.predecessors(stack.pop()):
            for v in G.predecessors(op):
                kind = G.nodes[v].get("kind")
                if kind in ("question", "answer"):  # a judge that reads only the answer: the answer's question
                    return str(G.nodes[v]["name"]).rsplit(":", 1)[-1]
                if kind == "judgement" and v not in seen:
                    seen.add(v)
                    stack.append(v)
    return None


def verdicts(G: nx.DiGraph) -> dict[str, bool]:
    """Question key → whether its judges judged the answer right (see the module docstring)."""
    votes: dict[str, dict[str, bool]] = {}
    for n, d in G.nodes(data=True):
        if d.get("kind") != "judgement" or (verdict := verdict_of(d.get("value"))) is None:
            continue
        if any(G.nodes[w].get("kind") == "judgement" for op in G.successors(n) for w in G.successors(op)):
            continue  # a step another judgement is made from: not the judge's last word
        key = _question(G, n)
        writer = next(iter(G.predecessors(n)), None)
        if key is None or writer is None:
            continue
        judge = str(G.nodes[writer].get("sc_op_id") or writer)
        if judge not in votes.setdefault(key, {}) or d.get("sc_class") == "judge_score":
            votes[key][judge] = verdict
    for n, d in G.nodes(data=True):  # no judge op: a score an eval harness wrote into the answer's metadata
        if d.get("kind") != "answer" or (verdict := _marked(d.get("metadata"))) is None:
            continue
        key = _question(G, n)
        if key is not None and key not in votes:
            votes[key] = {n: verdict}
    return {key: 2 * sum(said.values()) > len(said) for key, said in votes.items()}


def _marked(meta: Any) -> bool | None:
    """The verdict an answer's metadata holds under an evaluation key (``{"eval": {"score": 0}}``,
    ``{"judge_score": 1}``, ``{"evaluation": {"correct": false}}``), or None."""
    if not isinstance(meta, dict):
        return None
    for key, value in meta.items():
        word = str(key).lower()
        if word in ("eval", "evaluation", "judge", "judgement", "judgment", "grade", "grading") and isinstance(
                value, dict):
            found = verdict_of({k: v for k, v in value.items() if k in _KEYS})
        elif word in ("judge_score", "eval_score", "verdict", "is_correct", "correct"):
            found = verdict_of(value)
        else:
            continue
        if found is not None:
            return found
    return None
