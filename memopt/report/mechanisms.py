"""Recurring failure mechanisms: what a blamed op lost, read from the attribution and the graph, offline.

`mechanism_of` names the mechanism of one attributed case: the blamed operation, the error type, and what
was lost there (`LOSSES`), read from the attribution's evidence path and the graph, never from a model:

- ``ExtractionError``: ``speaker`` when the blamed op kept other speakers' statements and none of the evidence
  turn's speaker (or, when it kept nothing at all, when no op of its kind ever kept that speaker while keeping
  others): a restriction to one speaker; else ``date`` when the evidence turn tells the time relatively ("last
  Friday") and the question asks when; else ``detail`` (one statement of a speaker whose others were kept);
- ``UpdateError``: ``overwritten`` when the version that replaced the one holding the answer came from a later
  turn (a new fact took the memory's place), else ``trimmed``;
- ``DeletionError``: ``deleted``; ``RetrievalError``: ``not_retrieved``;
- ``ResponseError``: ``no_abstention`` (an unanswerable question answered), ``ignored_context`` (the context
  held it), ``raw_only`` (no extraction step); anything else (a plug-in's reasons): ``other``.

Cases sharing (operation, error type, loss) form a group; `bearing_sentences` picks the sentences of the blamed
op's prompt that speak to the loss, and `advice` says what to change first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import networkx as nx

from memopt.core.text import find_relative_dates, sentences, stem, words

__all__ = ["LOSSES", "Mechanism", "mechanism_of", "bearing_sentences", "instructions_of", "speakers_kept"]

# loss → (what was lost, in words; the words a prompt sentence bearing on it shares)
LOSSES: dict[str, tuple[str, str]] = {
    "speaker": ("kept nothing a speaker said about themselves",
                "user users speaker speakers both assistant participant participants person people everyone only "
                "solely messages message other second"),
    "date": ("left a relative date unresolved",
             "date dates time times relative yesterday week calendar absolute session resolve"),
    "detail": ("dropped one statement of a speaker it otherwise kept",
               "detail details name names number numbers place places specific full exactly shorten fact facts"),
    "overwritten": ("overwrote a memory with a later fact on the same topic",
                    "update updates overwrite replace contradict contradicts compatible same merge different "
                    "information conveys"),
    "trimmed": ("trimmed the part of a memory that held the answer",
                "update keep detail details information most shorten merge"),
    "deleted": ("deleted a memory that held the answer", "delete deletes remove contradict contradicts retract "
                                                         "withdraw only"),
    "not_retrieved": ("left the memory that held the answer out of the context", "query search retrieve top"),
    "ignored_context": ("had the answer in its context and did not use it",
                        "memories memory context use combine relevant all every timestamps question"),
    "no_abstention": ("answered a question the conversation does not answer",
                      "mentioned know guess abstain unsure answer relevant information"),
    "raw_only": ("had only the raw turns: no extraction step kept the answer", "context turns conversation"),
    "other": ("failed as the attribution's reason says", ""),
}
_ADVICE = {
    "speaker": "Make `{op}` keep what every speaker says about themselves, each fact attributed to the person who "
               "said it.",
    "date": "Make `{op}` turn relative dates ('yesterday', 'last week') into calendar dates, counting from the "
            "session date.",
    "detail": "Make `{op}` keep whole statements, with their names, numbers and places.",
    "overwritten": "Make `{op}` overwrite a memory only when the new fact contradicts it, and add a compatible fact "
                   "as a new memory.",
    "trimmed": "Make `{op}` keep every detail of a memory it rewrites.",
    "deleted": "Make `{op}` delete only the memory a new fact explicitly retracts.",
    "not_retrieved": "The store held the answer: search wider with `{op}` ({steer}) or rewrite the query it searches "
                     "with.",
    "ignored_context": "Make `{op}` use every memory of its context that bears on the question.",
    "no_abstention": "Make `{op}` answer 'Not mentioned' when its context does not hold the answer.",
    "raw_only": "Add an extraction step, or give `{op}` the turns the answer needs.",
    "other": "Read the representative cases of `{op}` below.",
}
_WHEN = re.compile(r"^\s*(when|what (day|date|month|year|time))\b", re.IGNORECASE)


@dataclass(frozen=True)
class Mechanism:
    """What a blamed op lost: the group key of a case."""

    operation: str
    error_type: str
    loss: str

    @property
    def key(self) -> str:
        """``extract/ExtractionError/speaker``."""
        return f"{self.operation}/{self.error_type}/{self.loss}"

    @property
    def title(self) -> str:
        """``extract kept nothing a speaker said about themselves (ExtractionError)``."""
        return f"{self.operation} {LOSSES[self.loss][0]} ({self.error_type})"

    def advice(self, G: nx.DiGraph | None = None) -> str:
        """What to change first, in one sentence (a tool op: the knobs and ops that steer it)."""
        spec = ((G.graph.get("operations") or {}).get(self.operation) or {}) if G is not None else {}
        steer = ", ".join(spec.get("steered_by") or []) or "its top_k"
        return _ADVICE[self.loss].format(op=self.operation, steer=steer)


def _speaker_of(G: nx.DiGraph, ref: str) -> str | None:
    name = ref.rpartition("@")[0] if "@" in ref else ref
    name = name if name.startswith("turn:") else f"turn:{name}"
    node = f"{name}@1"
    value = G.nodes[node].get("value") if node in G else None
    return value.get("speaker") if isinstance(value, dict) else None


def speakers_kept(G: nx.DiGraph, operation: str, op_id: str | None = None) -> tuple[set[str], set[str]]:
    """(speakers whose turns ops of ``operation`` — or the op ``op_id`` alone — read, speakers whose statements they
    kept in what they wrote)."""
    read, kept = set(), set()
    for op, d in G.nodes(data=True):
        if d.get("type") != "op" or d.get("operation") != operation or op_id not in (None, op):
            continue
        for v in G.predecessors(op):
            value = G.nodes[v].get("value")
            if G.nodes[v].get("kind") == "turn" and isinstance(value, dict):
                read.add(value.get("speaker"))
        for w in G.successors(op):
            refs = [*(G.nodes[w].get("derived_from") or []), *(G.nodes[w].get("sources") or [])]
            kept.update(s for r in refs if isinstance(r, str) and (s := _speaker_of(G, r)))
    return read - {None}, kept


def _evidence_turn(G: nx.DiGraph, path: tuple[str, ...], evidence: tuple[str, ...]) -> str | None:
    turns = [n for n in path if n in G and G.nodes[n].get("kind") == "turn"]
    turns += [f"turn:{e}@1" for e in evidence if f"turn:{e}@1" in G]
    return turns[0] if turns else None


def mechanism_of(attribution: Any, G: nx.DiGraph | None, *, question: str = "",
                 evidence: tuple[str, ...] = ()) -> Mechanism:
    """The mechanism of one attributed case (see the module docstring); without its graph, from the reason only."""
    a = attribution
    loss = "other"
    reason = a.reason or ""
    if a.error_type == "ResponseError":
        loss = ("no_abstention" if "cannot be answered" in reason else "ignored_context" if "context held" in reason
                else "raw_only" if "no extraction step" in reason else "other")
    elif a.error_type == "DeletionError":
        loss = "deleted"
    elif a.error_type == "RetrievalError":
        loss = "not_retrieved"
    elif a.error_type == "UpdateError":
        loss = _update_loss(G, a)
    elif a.error_type == "ExtractionError":
        loss = _extraction_loss(G, a, question, evidence)
    return Mechanism(a.operation, a.error_type, loss)


def _update_loss(G: nx.DiGraph | None, a: Any) -> str:
    path = [n for n in a.evidence_path if G is not None and n in G]
    if G is None or a.op_id not in path:
        return "trimmed"
    after = [n for n in path[path.index(a.op_id) + 1:] if G.nodes[n].get("type") == "variable"]
    before = [n for n in path[:path.index(a.op_id)] if G.nodes[n].get("type") == "variable"
              and G.nodes[n].get("kind") != "turn"]
    if not after:
        return "trimmed"
    old = set(G.nodes[before[-1]].get("sources") or []) if before else set()
    new = set(G.nodes[after[0]].get("sources") or [])
    turns = {r.removeprefix("turn:") for r in G.nodes[after[0]].get("derived_from") or [] if r.startswith("turn:")}
    return "overwritten" if (new | turns) - old else "trimmed"


def _extraction_loss(G: nx.DiGraph | None, a: Any, question: str, evidence: tuple[str, ...]) -> str:
    if G is None:
        return "other"
    turn = _evidence_turn(G, a.evidence_path, evidence)
    value = G.nodes[turn].get("value") if turn is not None else None
    if not isinstance(value, dict):
        return "detail"
    speaker = value.get("speaker")
    read, kept = speakers_kept(G, a.operation, a.op_id)
    if not kept:  # the op kept nothing: did any op of its kind ever keep this speaker?
        read, kept = speakers_kept(G, a.operation)
    if speaker not in kept and kept and len(read) > 1:
        return "speaker"
    if find_relative_dates(str(value.get("text", ""))) and _WHEN.match(question or ""):
        return "date"
    return "detail"


def instructions_of(G: nx.DiGraph, operation: str) -> str:
    """The instructions an operation ran with: the graph's ``instructions``, else the prompt variable its ops read."""
    text = (G.graph.get("instructions") or {}).get(operation)
    if text:
        return str(text)
    for op, d in G.nodes(data=True):
        if d.get("type") == "op" and d.get("operation") == operation:
            prompt = next((v for v in G.predecessors(op) if G.nodes[v].get("kind") == "prompt"), None)
            if prompt is not None and isinstance(G.nodes[prompt].get("value"), str):
                return G.nodes[prompt]["value"]
    return ""


def _stems(text: str) -> set[str]:
    return {stem(w) for w in words(text)}  # stopwords kept: "only", "both", "every" matter here


def bearing_sentences(instructions: str, loss: str, limit: int = 3) -> list[str]:
    """The sentences of a prompt that speak to a loss, most related first: at most ``limit``, each sharing at least
    as many of the loss's words as the best one less one (none when no sentence shares a word with it)."""
    terms = _stems(LOSSES[loss][1])
    if not terms:
        return []
    found = []
    for i, line in enumerate(s for block in instructions.splitlines() for s in sentences(block)):
        text = line.strip(" -*\t")
        if not text or len(text) > 400:
            continue
        score = len(_stems(text) & terms)
        if score:
            found.append((-score, i, text))
    top = -min((score for score, _, _ in found), default=0)
    return [text for score, _, text in sorted(found)[:limit] if -score >= max(1, top - 1)]
