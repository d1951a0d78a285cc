"""The corpora of instruction sentences by other authors (issue 21): loading, validating and scoring them.

Each corpus is ``tests/fixtures/directive_corpus_<name>.yaml``: a ``sentences:`` list of ``{text, expect, op,
style}``. An item whose ``expect`` names a directive must turn it on (stance +1) in ``op``; read backwards is stance
-1; it also turns on another directive when any other of that operation's directives goes on. A ``none`` item is a
false trigger when it turns on any directive of its operation.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from memopt.simlm import CATALOGUE, directive_stances

__all__ = ["load_corpus", "corpus_figures", "check_corpus", "check_measured", "check_targets", "report"]

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def load_corpus(name: str) -> list[dict[str, str]]:
    """The items of ``directive_corpus_<name>.yaml``."""
    return yaml.safe_load((FIXTURES / f"directive_corpus_{name}.yaml").read_text())["sentences"]


def corpus_figures(items: list[dict[str, str]]) -> dict[str, Any]:
    """Counts over a corpus: grants, negatives, recognised, backwards, cross, false; the misses, and by style."""
    misses: list[str] = []
    counts: Counter[str] = Counter(grants=0, negatives=0, recognised=0, backwards=0, cross=0, false=0)
    missed_styles: Counter[str] = Counter()
    for item in items:
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


def check_corpus(items: list[dict[str, str]]) -> None:
    """Every item well-formed with a valid (directive, operation) pair; ≥ 100 negatives and ≥ 15 per directive."""
    ops = {d.id: set(d.operations) for d in CATALOGUE}
    every_op = set().union(*ops.values())
    for item in items:
        assert set(item) == {"text", "expect", "op", "style"}, item
        assert item["op"] in (every_op if item["expect"] == "none" else ops[item["expect"]]), item
    per = Counter(item["expect"] for item in items)
    assert per["none"] >= 100 and all(per[d] >= 15 for d in ops), per


def check_measured(figures: dict[str, Any], sizes: tuple[int, int], measured: dict[str, int]) -> None:
    """The corpus has ``sizes`` (grants, negatives) and the reader does at least as well as ``measured``."""
    assert (figures["grants"], figures["negatives"]) == sizes
    assert figures["recognised"] >= measured["recognised"], figures["misses"]
    assert figures["backwards"] <= measured["backwards"], figures["misses"]
    assert figures["false"] <= measured["false"], figures["misses"]
    assert figures["cross"] <= measured["cross"], figures["misses"]


def check_targets(figures: dict[str, Any], sizes: tuple[int, int]) -> None:
    """Issue 21's targets: ≥ 92 % recognised, 0 read backwards, ≤ 5 % false, ≤ 5 % cross."""
    assert (figures["grants"], figures["negatives"]) == sizes
    assert figures["recognised"] >= 0.92 * figures["grants"], figures["misses"]
    assert figures["backwards"] == 0, figures["misses"]
    assert figures["false"] <= 0.05 * figures["negatives"], figures["misses"]
    assert figures["cross"] <= 0.05 * figures["grants"], figures["misses"]


def report(name: str) -> None:
    """Print a corpus' figures and misses (``python -m tests.simlm.test_corpora NAME``)."""
    result = corpus_figures(load_corpus(name))
    g, n = result["grants"], result["negatives"]
    print(f"{name:<8} recognised {result['recognised'] / g:.1%} ({result['recognised']} of {g}); read backwards "
          f"{result['backwards']}; also turn on another {result['cross'] / g:.1%} ({result['cross']}); false triggers "
          f"{result['false'] / n:.1%} ({result['false']} of {n})")
    print("misses by style:", result["missed_styles"])
    print("\n".join(result["misses"]))
