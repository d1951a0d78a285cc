"""The corpora of instruction sentences by other authors (issue 21): loading, validating and scoring them.

A corpus SimLM trains on is ``memopt/simlm/corpora/<name>.yaml``; one not yet trained on (a new author's, to be
measured once) is ``tests/fixtures/directive_corpus_<name>.yaml`` or any path. Each holds a ``sentences:`` list of
``{text, expect, op, style}``: an item whose ``expect`` names a directive must turn it on (stance +1) in ``op``; read
backwards is stance -1; it also turns on another directive when any other of that operation's directives goes on.
A ``none`` item is a false trigger when it turns on any directive of its operation; a ``not D`` item (a near-miss
of D only, in the first and styles corpora) when it turns D on. ``op`` may list several operations (the first three
corpora): the item is recognised where any of them reads it, and a negative item is a false trigger where any of them
turns on what it must not.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memopt.simlm import CATALOGUE, directive_stances
from memopt.simlm.learned import CORPORA, corpus_items

__all__ = ["FIXTURES", "corpus_path", "load_corpus", "shipped_corpora", "operations", "corpus_figures",
           "check_corpus", "check_measured", "check_targets", "figures_line", "held_out_reader"]

FIXTURES = Path(__file__).resolve().parent / "fixtures"
Reader = Callable[[str, str], dict[str, int]]


def shipped_corpora() -> list[str]:
    """The names of the corpora SimLM trains on."""
    return sorted(p.stem for p in CORPORA.glob("*.yaml"))


def corpus_path(name: str) -> Path:
    """Where corpus ``name`` is: SimLM's own, else a test fixture, else ``name`` as a path."""
    for path in (CORPORA / f"{name}.yaml", FIXTURES / f"directive_corpus_{name}.yaml", Path(name)):
        if path.is_file():
            return path
    raise FileNotFoundError(f"no corpus {name!r}: not in {CORPORA}, not {FIXTURES}/directive_corpus_{name}.yaml, "
                            "not a file")


def load_corpus(name: str) -> list[dict[str, Any]]:
    """The items of corpus ``name`` (`corpus_path`)."""
    return corpus_items([corpus_path(name)])


def operations(item: dict[str, Any]) -> list[str]:
    """The operations an item is sent to."""
    return item["op"] if isinstance(item["op"], list) else [item["op"]]


def _stances(read: Reader, item: dict[str, Any]) -> dict[str, int]:
    merged: dict[str, int] = {}
    for op in operations(item):
        for directive, stance in read(op, item["text"]).items():
            merged[directive] = max(merged.get(directive, stance), stance)
    return merged


def corpus_figures(items: list[dict[str, Any]], read: Reader = directive_stances) -> dict[str, Any]:
    """Counts over a corpus as ``read`` reads it (default: SimLM): grants, negatives, recognised, backwards, cross,
    false; the misses, and by style."""
    misses: list[str] = []
    counts: Counter[str] = Counter(grants=0, negatives=0, recognised=0, backwards=0, cross=0, false=0)
    missed_styles: Counter[str] = Counter()
    for item in items:
        stances = _stances(read, item)
        on = sorted(k for k, v in stances.items() if v > 0)
        if item["expect"] == "none" or item["expect"].startswith("not "):
            counts["negatives"] += 1
            if item["expect"].startswith("not "):
                on = [d for d in on if d == item["expect"][4:]]
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


def check_corpus(items: list[dict[str, Any]]) -> None:
    """Every item well-formed with a valid (directive, operation) pair; ≥ 100 negatives and ≥ 15 per directive."""
    ops = {d.id: set(d.operations) for d in CATALOGUE}
    every_op = set().union(*ops.values())
    for item in items:
        assert set(item) == {"text", "expect", "op", "style"}, item
        expect = item["expect"].removeprefix("not ")
        assert set(operations(item)) <= (every_op if expect == "none" else ops[expect]), item
    per = Counter("none" if item["expect"].startswith("not ") else item["expect"] for item in items)
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


def figures_line(label: str, result: dict[str, Any]) -> str:
    """One line of a corpus' figures: recognised, read backwards, also turning on another, false triggers."""
    g, n = result["grants"], result["negatives"]
    return (f"{label}: recognised {result['recognised'] / g:.1%} ({result['recognised']} of {g}); read backwards "
            f"{result['backwards']}; also turn on another {result['cross'] / g:.1%} ({result['cross']}); false "
            f"triggers {result['false'] / n:.1%} ({result['false']} of {n})")


def held_out_reader(name: str) -> Reader:
    """SimLM's reader with its classifier trained on every corpus but ``name`` (and the catalogue's sentences, as
    shipped): how it reads an author it has not seen."""
    from memopt.simlm.directives import CATALOGUE_SENTENCES, read_stances
    from memopt.simlm.learned import fit

    others = [corpus_path(n) for n in shipped_corpora() if n != name]
    model = fit([*corpus_items(others), *({"text": t, "expect": e} for t, e in CATALOGUE_SENTENCES)])
    return lambda op, text: read_stances(op, text, model)
