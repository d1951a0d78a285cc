"""A memory made up beside the right one: the context held the needed information, but also a store unit the answer
followed that no turn it was written from states (a fact re-added wrongly after its delete). Fixing the extraction
that wrote it alone gives the right answer, so it is blamed (`memopt.attribution.memtrace`)."""

from __future__ import annotations

import datetime as dt
import re

import networkx as nx

from memopt.attribution.case import FailedCase
from memopt.attribution.normalise import plain
from memopt.attribution.probe import Probe
from memopt.core.text import WEEKDAYS, find_dates, format_date, overlap
from memopt.judge.rules import CONTAINS_RECALL_THRESHOLD

__all__ = ["invented_memory"]


def invented_memory(case: FailedCase, probe: Probe, live: frozenset[str]) -> tuple[str, str] | None:
    """A store unit in the answer's context that states the prediction and not the gold, written from turns none
    of which states it (a memory made up or re-added wrongly beside the right one): (the earliest copy holding its
    text, the op that wrote that copy from the turns); None when there is none."""
    G = case.G
    prediction = (case.prediction or plain(G.nodes[case.answer_var].get("value"))).strip()  # else the graph's answer
    if not prediction:
        return None
    above = {a for v in case.context_vars for a in nx.ancestors(G, v)}
    stating = [u for u in sorted((u for u in above if "action" in G.nodes[u] and u in live),
                                 key=lambda u: G.nodes[u]["created"])
               if probe.read(u).strip() and overlap(probe.read(u), prediction) >= CONTAINS_RECALL_THRESHOLD]
    if not stating or probe.holds_text(prediction):  # no unit has the prediction's words: no judge call
        return None
    for unit in stating:
        text = probe.read(unit)
        if probe.holds(unit):
            continue
        origin = _origin(G, probe, unit, text)
        if origin is None:
            continue
        writer = next(iter(G.predecessors(origin)))
        turns = [t for t in G.predecessors(writer) if G.nodes[t]["kind"] == "turn"]
        turns.sort(key=lambda t: -overlap(text, probe.read(t)))  # the likeliest first: any() stops at it
        if not any(_turn_states(probe, text, t) for t in turns):
            return origin, writer
    return None


_WEEKDAY_BEFORE = re.compile(r"\bthe\s+(" + "|".join(WEEKDAYS) + r")\s+(before|after)\s+$", re.IGNORECASE)


def _days_read(text: str) -> str:
    """A unit's "the Tuesday before 2 May 2023" as the day it names ("on 25 April 2023"), the form a turn's careful
    reading gives its "last Tuesday", so that a unit and its turn compare their dates in one form."""
    for mention in find_dates(text):
        at = text.find(mention.text)
        weekday = _WEEKDAY_BEFORE.search(text[:at]) if at >= 0 and None not in (
            mention.day, mention.month, mention.year) else None
        if weekday is None:
            continue
        step = dt.timedelta(days=-1 if weekday.group(2).lower() == "before" else 1)
        try:
            day = dt.date(mention.year, mention.month, mention.day) + step  # type: ignore[arg-type]
        except ValueError:  # no such day ("31 February")
            continue
        while WEEKDAYS[day.weekday()].lower() != weekday.group(1).lower():
            day += step
        text = f"{text[:weekday.start()]}on {format_date(day)}{text[at + len(mention.text):]}"
    return text


def _turn_states(probe: Probe, text: str, turn: str) -> bool:
    """Whether a turn states a unit's text (its dates read as the turn's are, numbers aside; one judge call,
    counted)."""
    probe.calls += 1
    return probe.judge.contains(re.sub(r"\d+", " ", _days_read(text)), probe.read(turn))


def _origin(G: nx.DiGraph, probe: Probe, unit: str, text: str) -> str | None:
    """The copy a unit's text was first written in: back from the unit through the inputs of each writer that
    state the text, the copy whose writer read turns and no input stating it."""
    seen, todo = set(), [unit]
    while todo:
        v = todo.pop()
        writer = next(iter(G.predecessors(v)), None)
        if writer is None or v in seen:
            continue
        seen.add(v)
        inputs = [p for p in G.predecessors(writer) if G.nodes[p].get("type") == "variable"]
        stating = [p for p in inputs if G.nodes[p]["kind"] != "turn" and _states_line(probe.read(p), text)]
        if not stating:
            return v if any(G.nodes[p]["kind"] == "turn" for p in inputs) else None
        todo.extend(stating)
    return None


def _states_line(text: str, line: str) -> bool:
    """Whether one line of a text has every word of ``line`` (numbers aside: a year a copy adds)."""
    words = re.sub(r"\d+", " ", line)
    return any(overlap(words, own) >= 1.0 for own in text.splitlines())
