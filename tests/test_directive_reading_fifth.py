"""SimLM's directive reading on the fifth corpus: written by a new author, measured once.

tests/fixtures/directive_corpus_fifth.yaml (issue 21) was written by a new author who did not open SimLM's reader
(memopt/simlm/), the earlier corpora, their tests, docs/simlm.md or the git log: from the catalogue's id, operations
and behaviour columns of `memopt directives --markdown` and issue 21's text (its header says exactly what was read),
in the styles of real prompts (RFC 2119 rules, docstrings, product notes, Do's and Don'ts, markdown headings, XML,
rationale-first sentences, non-native English), with near misses of many kinds (other components' jobs, plans,
changelogs, counterfactuals, adjacent rules such as date formats). It was committed alone, and measured once, after
the reader's fourth pass (which tuned on the fourth corpus, by construction families), with the figures pinned
below. Since then it is TUNING material: the reader's fifth pass (scope constructions that read instructions
backwards, tests/test_directive_reading_scope.py) looked at its misses, so its figures no longer say how the reader
does on an unseen author; a sixth corpus, written meanwhile by another author, is the next held-out measurement. The
pins below are the figures after the fifth pass and may only improve; it does not yet meet issue 21's targets.

Each item names the one operation its sentence is sent to. An "on" item must turn on its directive (stance +1) in
that operation; read backwards is stance -1; it also turns on another directive when any other of that operation's
directives goes on. A ``none`` item is a false trigger when it turns on any directive of its operation. Print the
figures with ``python tests/test_directive_reading_fifth.py``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import yaml

from memopt.simlm import CATALOGUE, directive_stances

ITEMS = yaml.safe_load((Path(__file__).resolve().parent / "fixtures" / "directive_corpus_fifth.yaml").read_text())[
    "sentences"]


def fifth_figures() -> dict[str, object]:
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


def test_the_fifth_corpus_is_valid_and_covers_every_directive():
    ops = {d.id: set(d.operations) for d in CATALOGUE}
    every_op = set().union(*ops.values())
    for item in ITEMS:
        assert set(item) == {"text", "expect", "op", "style"}, item
        assert item["op"] in (every_op if item["expect"] == "none" else ops[item["expect"]]), item
    per = Counter(item["expect"] for item in ITEMS)
    assert per["none"] >= 100 and all(per[d] >= 15 for d in ops), per


def test_the_fifth_corpus_at_the_figures_measured_once():
    """Measured once, then tuned on (see the module docstring); the counts after the fifth pass may only improve."""
    figures = fifth_figures()
    assert (figures["grants"], figures["negatives"]) == (163, 124)
    assert figures["recognised"] >= MEASURED["recognised"], figures["misses"]
    assert figures["backwards"] <= MEASURED["backwards"], figures["misses"]
    assert figures["false"] <= MEASURED["false"], figures["misses"]
    assert figures["cross"] <= MEASURED["cross"], figures["misses"]


# The one measurement (reader of main at 339e671): 143 of 163 recognised (87.7 %), 9 read backwards, 1 also turning
# on another directive (0.6 %), 10 of 124 false triggers (8.1 %). Below issue 21's targets (>= 92 %, 0, <= 5 %).
# For comparison, the reader before its fourth pass (main at 049b5a2): 141 (86.5 %), 10 backwards, 12 false (9.7 %).
# After the fifth pass (tuned with this corpus in view, so no longer held out): 149 (91.4 %), 2 backwards, 10 false.
MEASURED = {"recognised": 149, "backwards": 2, "false": 10, "cross": 1}


if __name__ == "__main__":
    result = fifth_figures()
    g, n = result["grants"], result["negatives"]
    print(f"fifth    recognised {result['recognised'] / g:.1%} ({result['recognised']} of {g}); read backwards "
          f"{result['backwards']}; also turn on another {result['cross'] / g:.1%} ({result['cross']}); false triggers "
          f"{result['false'] / n:.1%} ({result['false']} of {n})")
    print("misses by style:", result["missed_styles"])
    print("\n".join(result["misses"]))
