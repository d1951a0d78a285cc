"""SimLM's directive reading on the fourth corpus: written by a new author, measured once, now tuning material.

tests/fixtures/directive_corpus_fourth.yaml (issue 21) was written by a new author who did not open SimLM's reader
(memopt/simlm/), the earlier corpora, their tests or docs/simlm.md: from the catalogue's id, operations and behaviour
columns of `memopt directives --markdown` and issue 21's text (its header says exactly what was read), in the styles of
real memory-system prompts (Mem0, Zep / Graphiti, Letta, LangChain, LlamaIndex, CrewAI, AutoGen, the OpenAI cookbook;
XML tags, FAQs, few-shot demonstrations, numbered rules, non-native English). It was committed alone and measured
once, after the reader's third pass, with the reader of main at 0297f77: 132 of 160 recognised (82.5 %), 8 read
backwards, 1 also turning on another directive (0.6 %), 9 of 132 false triggers (6.8 %), below issue 21's targets.
The reader's fourth pass then tuned on its misses by family (demonstrations, plans and counterfactuals, value
judgements, personas, synonyms: tests/test_directive_reading_families.py), so this corpus is TUNING material now and
its figures say nothing about a new author; the test below holds the reader to issue 21's targets on it.

Each item names the one operation its sentence is sent to. An "on" item must turn on its directive (stance +1) in
that operation; read backwards is stance -1; it also turns on another directive when any other of that operation's
directives goes on. A ``none`` item is a false trigger when it turns on any directive of its operation. Print the
figures with ``python tests/test_directive_reading_fourth.py``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import yaml

from memopt.simlm import CATALOGUE, directive_stances

ITEMS = yaml.safe_load((Path(__file__).resolve().parent / "fixtures" / "directive_corpus_fourth.yaml").read_text())[
    "sentences"]


def fourth_figures() -> dict[str, object]:
    """Counts over the fourth corpus: recognised, read backwards, also-turns-on-another, false triggers, by style."""
    misses: list[str] = []
    counts: Counter[str] = Counter(recognised=0, backwards=0, false=0, cross=0)
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


def test_the_fourth_corpus_is_valid_and_covers_every_directive():
    ops = {d.id: set(d.operations) for d in CATALOGUE}
    every_op = set().union(*ops.values())
    for item in ITEMS:
        assert set(item) == {"text", "expect", "op", "style"}, item
        assert item["op"] in (every_op if item["expect"] == "none" else ops[item["expect"]]), item
    per = Counter(item["expect"] for item in ITEMS)
    assert per["none"] >= 100 and all(per[d] >= 15 for d in ops), per


def test_the_once_heldout_fourth_corpus_now_meets_the_targets():
    """Issue 21's targets on the fourth corpus, tuning material since its one measurement (module docstring)."""
    figures = fourth_figures()
    assert (figures["grants"], figures["negatives"]) == (160, 132)
    assert figures["recognised"] >= 0.92 * figures["grants"], figures["misses"]
    assert figures["backwards"] == 0, figures["misses"]
    assert figures["false"] <= 0.05 * figures["negatives"], figures["misses"]
    assert figures["cross"] <= 0.05 * figures["grants"], figures["misses"]


if __name__ == "__main__":
    result = fourth_figures()
    g, n = result["grants"], result["negatives"]
    print(f"fourth   recognised {result['recognised'] / g:.1%} ({result['recognised']} of {g}); read backwards "
          f"{result['backwards']}; also turn on another {result['cross'] / g:.1%} ({result['cross']}); false triggers "
          f"{result['false'] / n:.1%} ({result['false']} of {n})")
    print("misses by style:", result["missed_styles"])
    print("\n".join(result["misses"]))
