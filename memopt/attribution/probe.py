"""`Probe`: asks the judge whether variables hold what a failed answer needs; counts and caches judge calls.

What the answer needs is a list of pieces (`memopt.attribution.need`): the items the gold lists, or, for a
computed answer, the facts it is computed from. A variable holds a piece when

- it is an evidence turn the piece comes from (the turn is the information itself); no other turn holds it (the
  turns a piece comes from are chosen once, with the pieces: a truncation reading every turn of a long
  conversation asks no judge call per turn);
- it is a raw copy of such a turn (a chunk, a buffer, a context made of turns): the turn's words verbatim,
  no judge call;
- it is a result list naming store units by id (``refs``, `memopt.trace.references`) and one of them holds it;
- its value, read carefully (`memopt.attribution.normalise.reading`: dates against the item's own date, years
  completed, numbers as digits), states the piece (`memopt.attribution.need`; one judge call).

A deleted version holds nothing. A variable holds the information when it holds every piece; variables cover it
together when each piece is held by one of them.
"""

from __future__ import annotations

import datetime as dt
import re
import weakref
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

import networkx as nx

from memopt.attribution.cast import Cast, cast_of
from memopt.attribution.fields import another_records, misfiled
from memopt.attribution.need import (
    Piece,
    about_someone_else,
    computed_held,
    computed_pieces,
    gold_pieces,
    is_quantity,
    names_in,
    states_duration,
    states_quantity,
    turned_round,
)
from memopt.attribution.normalise import canonical_dates, item_day, normalise_numbers, plain, reading
from memopt.attribution.owner import asker_of, first_person, held_for_others, held_for_someone_else
from memopt.attribution.polar import polar_topic, says_retired
from memopt.core.text import overlap
from memopt.judge.judges import Judge
from memopt.judge.rules import CONTAINS_RECALL_THRESHOLD
from memopt.trace.dates import read_day
from memopt.trace.graph import variables

__all__ = ["Probe", "Question", "node_reading"]

_READINGS: weakref.WeakKeyDictionary[nx.DiGraph, tuple[int, dict[str, str]]] = weakref.WeakKeyDictionary()
_CASTS: weakref.WeakKeyDictionary[nx.DiGraph, tuple[int, Cast]] = weakref.WeakKeyDictionary()


class Question(Protocol):
    """What a probe reads of a failed case (`memopt.attribution.case.FailedCase` is one)."""

    G: nx.DiGraph
    question: str
    gold: str
    pseudo_evidence: bool

    @property
    def evidence_turns(self) -> list[str]:
        """The evidence turn variables."""

    @property
    def evidence_words(self) -> list[str]:
        """The words of each evidence turn as a copy of it holds them."""

    @property
    def turn_words(self) -> dict[str, str]:
        """Evidence turn variable → its words as a copy of it holds them."""

    def day_of(self, node: str) -> dt.date | None:
        """The day a variable was said or written, when known."""


def _squeeze(text: str) -> str:
    return " ".join(text.split())


def node_reading(d: dict[str, Any], said: dt.date | None = None) -> str:
    """A variable's value as a careful reader reads it: a turn's text against the day it was said (``said``, else
    its own date); anything else against its own date, the day it was written (``said``, else its session's)
    completing years only."""
    value = d.get("value")
    if d.get("kind") == "turn" and isinstance(value, dict):
        return reading(str(value.get("text", "")), said or item_day(value, d.get("metadata"), d.get("session_date")))
    day = item_day(value, d.get("metadata"))
    near = said or read_day(d.get("session_date"))
    return reading(value, day, near)


_LETTER_COMPOUND = re.compile(r"\b([A-Za-z])-(?=[A-Za-z]{2})")


_GIC = re.compile(r"\b(\w{3,})gic(?=\b)", re.IGNORECASE)


def _one_word(text: str) -> str:
    """A name made of a letter and a word (``T-Mobile``, ``X-Ray``) as one word (``TMobile``), so that its word
    alone ("Mobile carrier is Verizon") does not state it; an adjective in -gic as its noun in -gy ("allergic to
    latex" states "latex allergy"). Applied to both sides."""
    return _GIC.sub(r"\1gy", _LETTER_COMPOUND.sub(r"\1", text))


@dataclass
class Probe:
    """Asks the judge whether variables hold the needed information; counts and caches judge calls."""

    case: Question
    judge: Judge
    calls: int = 0
    _verdicts: dict[tuple[str, int], bool] = field(default_factory=dict)

    # --- what is needed -------------------------------------------------------------------------------
    def _contains(self, information: str, text: str) -> bool:
        self.calls += 1
        return self.judge.contains(_one_word(canonical_dates(normalise_numbers(information))),
                                   _one_word(canonical_dates(normalise_numbers(text))))

    @cached_property
    def computed(self) -> bool:
        """Whether the gold is computed: a quantity no evidence turn states (its words, dates left out)."""
        case = self.case
        if not is_quantity(case.gold) or not case.evidence_turns:
            return False
        return not any(states_quantity(case.gold, self.read(t), case.question) for t in case.evidence_turns)

    @cached_property
    def pieces(self) -> tuple[Piece, ...]:
        """The pieces the answer needs (`memopt.attribution.need`); each gold item comes from the evidence turns
        that hold its words (all of them when none does); an item of a gold of several that is a quantity no
        evidence turn states ("About 6 weeks ago (43 days; 19 August 2023)") needs the facts it is computed from,
        as a computed gold does."""
        case = self.case
        if self.computed:
            turns = [(t, self.read(t), case.day_of(t)) for t in case.evidence_turns]
            found = computed_pieces(case.question, turns)
            if found:
                return tuple(found)
        topic = polar_topic(case.question, case.gold, " ".join(self.read(t) for t in case.evidence_turns))
        if topic is not None:  # "Yes" is held nowhere: what the question asks about is
            stating = [t for t in variables(case.G, "turn") if self._states(topic, t)]
            sources = [t for t in case.evidence_turns if t in stating] + [
                t for t in stating if t not in case.evidence_turns][:3]
            return (Piece(topic, tuple(sources or case.evidence_turns), polar=True),)  # (the evidence may be only
            # the turn misread into a delete; the thing itself came from the turn that first stated it)
        out: list[Piece] = []
        for part in gold_pieces(case.gold):
            if self._computed_item(part):  # "about 6 weeks ago (43 days": computed from the facts, once
                found = [p for p in computed_pieces(case.question, [
                    (t, self.read(t), case.day_of(t)) for t in case.evidence_turns]) if p not in out]
                if found:
                    out.extend(found)
                    continue
            sources = [t for t in case.evidence_turns if self._states(part, t)]
            if not sources and case.pseudo_evidence:  # retrieved evidence: turns of the graph stating it
                sources = [t for t in variables(case.G, "turn") if self._states(part, t)][:3]
            out.append(Piece(part, tuple(sources or ([] if case.pseudo_evidence else case.evidence_turns))))
        return tuple(out)

    def _computed_item(self, part: str) -> bool:
        """Whether one item of a gold of several is a quantity no evidence turn states (brackets aside)."""
        bare = re.sub(r"[()\[\]]", " ", part)
        return is_quantity(bare) and bool(self.case.evidence_turns) and not any(
            states_quantity(bare, self.read(t), self.case.question) for t in self.case.evidence_turns)

    def _states(self, part: str, turn: str) -> bool:
        words = _one_word(normalise_numbers(canonical_dates(part)))
        return overlap(words, _one_word(canonical_dates(self.read(turn)))) >= CONTAINS_RECALL_THRESHOLD

    def read(self, node: str) -> str:
        """A variable's value as a careful reader reads it (`node_reading`; remembered per graph)."""
        G = self.case.G
        cached = _READINGS.get(G)
        if cached is None or cached[0] != G.number_of_nodes():
            cached = (G.number_of_nodes(), {})
            _READINGS[G] = cached
        if node not in cached[1]:
            cached[1][node] = node_reading(G.nodes[node], self.case.day_of(node))
        return cached[1][node]

    @cached_property
    def names(self) -> str:
        """The people and things the question names, as one string ('' when none)."""
        return " ".join(names_in(self.case.question))

    # --- does a variable hold it -------------------------------------------------------------------------
    def raw_holds(self, text: str) -> bool:
        """Whether a raw text contains every evidence turn verbatim (its words, with or without its speaker; no
        judge call)."""
        texts = self.case.evidence_words
        squeezed = _squeeze(text)
        return bool(texts) and all(_squeeze(t) in squeezed for t in texts)

    def _raw_piece(self, text: str, piece: Piece) -> bool:
        squeezed = _squeeze(text)
        words = self.case.turn_words
        return any(t in words and _squeeze(words[t]) in squeezed for t in piece.turns)

    def text_holds_piece(self, text: str, piece: Piece) -> bool:
        """Whether a (read) text states one piece: the judge finds the piece in it (one call), and a line that
        has the piece's words is not about someone the question does not name (`need.about_someone_else`)."""
        if piece.computed:
            return any(computed_held(piece, line, self.case.question, self.pieces) for line in text.splitlines())
        if piece.polar:  # the thing a yes/no question asks about, on a line that does not say it is gone
            return any(self._contains(piece.text, line) and not says_retired(line)
                       for line in text.splitlines() or [text])
        if states_duration(piece.text, text):
            return True  # a count of days or nights the text states as a range that long
        if not self._contains(piece.text, text):
            return False
        words = normalise_numbers(canonical_dates(piece.text))
        lines = [line for line in canonical_dates(text).splitlines()
                 if overlap(words, normalise_numbers(line)) >= CONTAINS_RECALL_THRESHOLD]
        if lines and all(turned_round(piece.text, line) for line in lines):
            return False  # "Mira settled it" is not "Kestrel paid Mira"
        if not self.names:
            return True
        return not lines or any(not about_someone_else(line, self.case.question, self.case.gold, self.cast)
                                for line in lines)

    @cached_property
    def asker(self) -> str | None:
        """Who asked a first-person question, when its node names them (`memopt.attribution.owner`)."""
        if not first_person(self.case.question):
            return None
        G, key = self.case.G, self.case.key
        asked = [q for q in variables(G, "question") if str(G.nodes[q]["name"]).rsplit(":", 1)[-1] == key]
        return asker_of(G.nodes[asked[0]]) if asked else None

    def _someone_elses(self, value: Any, piece: Piece) -> bool:
        """Whether a value states the piece only in facts filed under someone other than the asker (a first-person
        question) or than every person the question names ("When is Maya's birthday?": not a row of Jordan's)."""
        if piece.computed:
            return False
        words = normalise_numbers(canonical_dates(piece.text))

        def states(text: str) -> bool:
            return overlap(words, normalise_numbers(canonical_dates(text))) >= CONTAINS_RECALL_THRESHOLD

        if self.asker is not None:
            return held_for_someone_else(value, self.asker, states)
        named = [n.lower() for n in names_in(self.case.question)]
        return bool(named) and not first_person(self.case.question) and held_for_others(value, named, states)

    @property
    def cast(self) -> Cast:
        """Who the conversation is about (`memopt.attribution.cast`; remembered per graph)."""
        G = self.case.G
        cached = _CASTS.get(G)
        if cached is None or cached[0] != G.number_of_nodes():
            turns = [G.nodes[t].get("value") for t in variables(G, "turn")]
            cached = (G.number_of_nodes(), cast_of((str(v.get("speaker") or ""), str(v.get("text") or ""))
                                                   for v in turns if isinstance(v, dict)))
            _CASTS[G] = cached
        return cached[1]

    def holds_piece(self, node: str, index: int) -> bool:
        """Whether a variable holds the ``index``-th piece."""
        key = (node, index)
        if key not in self._verdicts:
            d, piece = self.case.G.nodes[node], self.pieces[index]
            if node in piece.turns:
                verdict = True
            elif d.get("deleted"):
                verdict = False
            elif any(self.holds_piece(unit, index) for unit in d.get("refs") or ()):
                verdict = True  # a result list naming the units it found holds what they hold
            elif self._raw_piece(plain(d.get("value")), piece):
                verdict = True
            elif d.get("kind") == "turn":
                verdict = False  # the turns a piece comes from were chosen with the pieces: no other turn is judged
            elif "action" in d and another_records(self.case.G, node, self.case.question):
                verdict = False  # a field of another record (a writeback that matched the wrong one)
            elif self._someone_elses(d.get("value"), piece):
                verdict = False  # the same words, filed under another person of a shared store
            elif not piece.computed and misfiled(d.get("value"), self.case.question,
                                                 lambda text: self._contains(piece.text, text)):
                verdict = False  # the words under another field than the one the question asks about
            else:
                verdict = self.text_holds_piece(self.read(node), piece)
            self._verdicts[key] = verdict
        return self._verdicts[key]

    def states_gone(self, node: str, index: int) -> bool:
        """Whether a variable states what a yes/no question asks about only as gone ("renew passport: done"): the
        thing was ended, a delete, not rewritten."""
        piece, text = self.pieces[index], self.read(node)
        lines = [line for line in text.splitlines() or [text] if self._contains(piece.text, line)]
        return bool(lines) and all(says_retired(line) for line in lines)

    def pieces_held(self, node: str) -> frozenset[int]:
        """The indexes of the pieces a variable holds."""
        return frozenset(i for i in range(len(self.pieces)) if self.holds_piece(node, i))

    def holds(self, node: str) -> bool:
        """Whether a variable holds the needed information (every piece)."""
        return all(self.holds_piece(node, i) for i in range(len(self.pieces)))

    def covers(self, nodes: list[str]) -> bool:
        """Whether the variables together hold every piece."""
        return not self.missing(nodes)

    def missing(self, nodes: list[str]) -> list[int]:
        """The pieces none of the variables holds."""
        return [i for i in range(len(self.pieces)) if not any(self.holds_piece(n, i) for n in nodes)]

    def holds_text(self, text: str) -> bool:
        """Whether a text states the information (every piece; judge calls). Numbers written as words count as
        digits on both sides (`memopt.attribution.normalise`)."""
        return all(self._raw_piece(text, p) or self.text_holds_piece(text, p) for p in self.pieces)
