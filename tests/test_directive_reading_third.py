"""SimLM's directive reading on the third corpus: written by another author, measured once, tuning material since.

tests/fixtures/directive_corpus_third.yaml (issue 21) was written by a second author who did not open SimLM's reader
(memopt/simlm/), the earlier corpora or their tests: from the directive names, operations and one-line meanings, in
the styles of real memory-system prompts (Mem0, Zep, Letta, LangChain, LlamaIndex, the OpenAI cookbook; bullets,
``key: value`` lines, legal prose, non-native English, passive prohibitions, "unless", "rather than", "refrain").
They saw the first characters of the catalogue's cue rows in `memopt directives` and the constructions issue 21
lists; each item carries a style label, so those constructions can be counted apart. It was committed alone, and
measured once, after the reader's last change (reader of main at 2000f84): 147 of 173 recognised (85.0 %), 7 read
backwards, 2 also turning on another directive (1.2 %), 12 of 121 false triggers (9.9 %), below issue 21's targets
(>= 92 %, 0 backwards, <= 5 %).

Its misses have been read since and the reader fixed on them (mood: hypotheticals, plans and reported speech;
deferral to other components; preference comparatives; "not a reason"; safety refusals; lexicons by meaning group;
the constructions in tests/test_directive_reading_rules.py), so it is tuning material now, like the fresh corpus:
the reader must keep the targets on it. It is no evidence of how the reader handles unseen English; a fourth
corpus by another author, measured once, is.

Each item names the one operation its sentence is sent to. An "on" item must turn on its directive (stance +1) in
that operation; read backwards is stance −1; it also turns on another directive when any other of that operation's
directives goes on. A ``none`` item is a false trigger when it turns on any directive of its operation. Print the
figures with ``python tests/test_directive_reading_third.py``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import yaml

from memopt.simlm import CATALOGUE, directive_stances

ITEMS = yaml.safe_load((Path(__file__).resolve().parent / "fixtures" / "directive_corpus_third.yaml").read_text())[
    "sentences"]


def third_figures() -> dict[str, object]:
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


def test_the_third_corpus_is_valid_and_covers_every_directive():
    ops = {d.id: set(d.operations) for d in CATALOGUE}
    every_op = set().union(*ops.values())
    for item in ITEMS:
        assert set(item) == {"text", "expect", "op", "style"}, item
        assert item["op"] in (every_op if item["expect"] == "none" else ops[item["expect"]]), item
    per = Counter(item["expect"] for item in ITEMS)
    assert per["none"] >= 100 and all(per[d] >= 15 for d in ops), per


def test_the_once_heldout_third_corpus_now_meets_the_targets():
    """Issue 21's targets on the third corpus, tuning material since its one measurement (module docstring)."""
    figures = third_figures()
    assert (figures["grants"], figures["negatives"]) == (173, 121)
    assert figures["recognised"] >= 0.92 * figures["grants"], figures["misses"]
    assert figures["backwards"] == 0, figures["misses"]
    assert figures["false"] <= 0.05 * figures["negatives"], figures["misses"]
    assert figures["cross"] <= 0.05 * figures["grants"], figures["misses"]


if __name__ == "__main__":
    result = third_figures()
    g, n = result["grants"], result["negatives"]
    print(f"third    recognised {result['recognised'] / g:.1%} ({result['recognised']} of {g}); read backwards "
          f"{result['backwards']}; also turn on another {result['cross'] / g:.1%} ({result['cross']}); false triggers "
          f"{result['false'] / n:.1%} ({result['false']} of {n})")
    print("misses by style:", result["missed_styles"])
    print("\n".join(result["misses"]))
