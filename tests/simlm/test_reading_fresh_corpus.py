"""SimLM's directive reading on the fresh corpus: held out and measured once, tuning material since.

tests/fixtures/directive_corpus_fresh.yaml (issue 21) was committed alone ("fresh held-out corpus, written before
reading the reader"), from the public catalogue (docs/simlm.md) and the style of real memory-system prompts, before
its author opened memopt/simlm/instructions.py, concepts.py or the earlier corpora; then the reader was changed on
the other corpora only, and this corpus was measured once (127 of 151 recognised, 84.1 %; 5 read backwards; 4 of
104 false triggers). Its misses have been read since and the reader fixed on them (issue 21, the constructions in
tests/simlm/test_reading_rules.py), so it is tuning material now, like the styles corpus' once-held-out half:
the reader must keep the targets on it. It is no evidence of how the reader handles unseen English; a third
corpus by another author, measured once, is.

Stricter than the styles corpus: a near-miss fails when it turns on ANY directive of its directive's operations,
not only its own. Print the figures with ``python tests/simlm/test_reading_fresh_corpus.py``.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from memopt.simlm import CATALOGUE, directive_stances

CORPUS = yaml.safe_load((Path(__file__).resolve().parents[1] / "fixtures" / "directive_corpus_fresh.yaml").read_text())
OPERATIONS = sorted({op for d in CATALOGUE for op in d.operations})


def _stances(operations: tuple[str, ...] | list[str], sentence: str) -> dict[str, int]:
    merged: dict[str, int] = {}
    for op in operations:
        for directive, stance in directive_stances(op, sentence).items():
            merged[directive] = max(merged.get(directive, stance), stance)
    return merged


def fresh_figures() -> dict[str, object]:
    """Counts over the fresh corpus: recognised, read backwards, also-turns-on-another, and false triggers."""
    misses: list[str] = []
    grants = recognised = backwards = cross = negatives = false = own_false = 0
    for directive in CATALOGUE:
        entry = CORPUS[directive.id]
        for sentence in entry["grant"]:
            stances = _stances(directive.operations, sentence)
            grants += 1
            stance = stances.get(directive.id, 0)
            recognised += stance > 0
            backwards += stance < 0
            if stance <= 0:
                misses.append(f"{'backwards' if stance else 'missed'} {directive.id}: {sentence}")
            others = sorted(k for k, v in stances.items() if v > 0 and k != directive.id)
            if others:
                cross += 1
                misses.append(f"cross   {directive.id} -> {others}: {sentence}")
        for sentence in entry["other"]:
            negatives += 1
            on = sorted(k for k, v in _stances(directive.operations, sentence).items() if v > 0)
            if on:
                false += 1
                own_false += directive.id in on
                misses.append(f"false   {directive.id} -> {on}: {sentence}")
    for sentence in CORPUS["unrelated"]:
        negatives += 1
        on = sorted(k for k, v in _stances(OPERATIONS, sentence).items() if v > 0)
        if on:
            false += 1
            misses.append(f"false   unrelated -> {on}: {sentence}")
    return {"grants": grants, "recognised": recognised, "backwards": backwards, "cross": cross,
            "negatives": negatives, "false": false, "own_false": own_false, "misses": misses}


def test_the_fresh_corpus_covers_every_directive():
    figures = fresh_figures()
    assert figures["grants"] >= 130 and figures["negatives"] >= 90, figures
    for directive in CATALOGUE:
        assert len(CORPUS[directive.id]["grant"]) >= 15 and len(CORPUS[directive.id]["other"]) >= 5, directive.id


def test_the_once_heldout_fresh_corpus_now_meets_the_targets():
    """Measured once as a held-out corpus (127 of 151 recognised, 84.1 %; 5 read backwards; 1 also turning on another
    directive; 4 of 104 false triggers, 3.8 %). Tuning material since: the targets of issue 21 must hold on it."""
    figures = fresh_figures()
    assert figures["grants"] == 151 and figures["negatives"] == 104, figures
    assert figures["recognised"] / figures["grants"] >= 0.92, figures["misses"]
    assert figures["backwards"] == 0, figures["misses"]
    assert figures["false"] / figures["negatives"] <= 0.05, figures["misses"]
    assert figures["cross"] / figures["grants"] <= 0.05, figures["misses"]


if __name__ == "__main__":
    result = fresh_figures()
    g, n = result["grants"], result["negatives"]
    print(f"fresh    recognised {result['recognised'] / g:.1%} ({result['recognised']} of {g}); read backwards "
          f"{result['backwards']}; also turn on another {result['cross'] / g:.1%} ({result['cross']}); false triggers "
          f"{result['false'] / n:.1%} ({result['false']} of {n}; own directive {result['own_false']})")
    print("\n".join(result["misses"]))
