"""SimLM's directive reading on the sixth corpus: written by a new author, measured once.

tests/fixtures/directive_corpus_sixth.yaml (issue 21) was written by a new author who did not open SimLM's reader
(memopt/simlm/), the earlier corpora, their tests, docs/simlm.md or the git log: from the catalogue's id, operations
and behaviour columns of `memopt directives --markdown` and issue 21's text (they also saw the header row of every
column and about 21 concept names of the lexicon's first column while finding the layout), in the voices of people
who write prompts (a terse engineer, a consultant, a lawyer, a PM's ticket, templates with placeholders, questions
as instructions, failure stories) and of products (ChatGPT-style memory, support, tutoring, healthcare intake,
sales CRM, LangGraph, CrewAI, AutoGen, Semantic Kernel, Haystack, DSPy docstrings, Mem0, Zep, Letta, Cognee). It
was committed alone, and measured once, after the reader's fifth pass (which tuned on the fifth corpus), with the
figures pinned below: a change to the reader that loses a sentence fails here. Tuning the reader on its misses
makes it tuning material; say so here if that happens.

Each item names the one operation its sentence is sent to. An "on" item must turn on its directive (stance +1) in
that operation; read backwards is stance -1; it also turns on another directive when any other of that operation's
directives goes on. A ``none`` item is a false trigger when it turns on any directive of its operation. Print the
figures with ``python tests/test_directive_reading_sixth.py``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import yaml

from memopt.simlm import CATALOGUE, directive_stances

ITEMS = yaml.safe_load((Path(__file__).resolve().parent / "fixtures" / "directive_corpus_sixth.yaml").read_text())[
    "sentences"]


def sixth_figures() -> dict[str, object]:
    """Counts over the third corpus: recognised, read backwards, also-turns-on-another, false triggers, by style."""
    misses: list[str] = []
    counts: Counter[str] = Counter()
    missed_styles: Counter[str] = Counter()
    for item in ITEMS:
        stances = directive_stances(item["op"], item["text"])
        on = sorted(k for k, v in stances.items() if v > 0)
        if item["expect"] == "none":
            counts["negatives"] += 1
            if on:
                counts["false"] += 1
                missed_styles[item["style"]] += 1
                misses.append(f"false   {item['op']} -> {on}: {item['text']}")
            continue
        counts["grants"] += 1
        stance = stances.get(item["expect"], 0)
        counts["recognised"] += stance > 0
        counts["backwards"] += stance < 0
        if stance <= 0:
            missed_styles[item["style"]] += 1
            misses.append(f"{'backwards' if stance else 'missed'} {item['expect']} ({item['style']}): {item['text']}")
        others = [k for k in on if k != item["expect"]]
        if others:
            counts["cross"] += 1
            misses.append(f"cross   {item['expect']} -> {others}: {item['text']}")
    return {**counts, "misses": misses, "missed_styles": dict(missed_styles)}


def test_the_sixth_corpus_is_valid_and_covers_every_directive():
    ops = {d.id: set(d.operations) for d in CATALOGUE}
    every_op = set().union(*ops.values())
    for item in ITEMS:
        assert set(item) == {"text", "expect", "op", "style"}, item
        assert item["op"] in (every_op if item["expect"] == "none" else ops[item["expect"]]), item
    per = Counter(item["expect"] for item in ITEMS)
    assert per["none"] >= 100 and all(per[d] >= 15 for d in ops), per


def test_the_sixth_corpus_at_the_figures_measured_once():
    """Measured once (see the module docstring); the counts may only improve."""
    figures = sixth_figures()
    assert (figures["grants"], figures["negatives"]) == (166, 116)
    assert figures["recognised"] >= MEASURED["recognised"], figures["misses"]
    assert figures["backwards"] <= MEASURED["backwards"], figures["misses"]
    assert figures["false"] <= MEASURED["false"], figures["misses"]
    assert figures["cross"] <= MEASURED["cross"], figures["misses"]


# The one measurement (reader after its fifth pass, main + i21reader5): 136 of 166 recognised (81.9 %), 5 read
# backwards, 3 also turning on another directive (1.8 %), 10 of 116 false triggers (8.6 %). Below issue 21's targets.
MEASURED = {"recognised": 136, "backwards": 5, "false": 10, "cross": 3}


if __name__ == "__main__":
    result = sixth_figures()
    g, n = result["grants"], result["negatives"]
    print(f"sixth    recognised {result['recognised'] / g:.1%} ({result['recognised']} of {g}); read backwards "
          f"{result['backwards']}; also turn on another {result['cross'] / g:.1%} ({result['cross']}); false triggers "
          f"{result['false'] / n:.1%} ({result['false']} of {n})")
    print("misses by style:", result["missed_styles"])
    print("\n".join(result["misses"]))
