"""The leave-one-corpus-out sweep that chooses the reader's setting (`tests.simlm.reader_sweep`): every setting must
pass the canonical checks, and a backwards reading or a miss is told apart by its cause."""

from __future__ import annotations

from memopt.simlm import learned
from memopt.simlm.directives import classifier
from tests.simlm.reader_sweep import MEM0_LINES, canonical_failures, figures


def test_the_shipped_reader_passes_the_canonical_checks():
    assert canonical_failures(classifier()) == []


def test_the_canonical_checks_catch_a_reader_that_loses_a_one_line_directive(monkeypatch):
    """A setting under which the rules' grant needs a surer classifier loses "Resolve relative dates." (0.32 as
    shipped), as C = 100 did (0.17): the sweep must say so, whatever the held-out corpora gain."""
    monkeypatch.setattr(learned, "AGREE", 0.5)
    failed = canonical_failures(classifier())
    assert any("'Resolve relative dates.'" in line for line in failed), failed
    assert ("extract", "Resolve relative dates.", "resolve_dates") in MEM0_LINES


def _item(expect: str, rules: dict[str, int], probs: dict[str, float]) -> dict:
    return {"text": "t", "expect": expect, "style": "s", "reads": [([(rules, probs, True)], set())]}


def test_backwards_readings_and_misses_are_counted_by_cause():
    read = [
        _item("abstain", {"abstain": -1}, {"abstain": 0.8, "none": 0.2}),  # the rules' "off" vetoes a sure classifier
        _item("abstain", {"abstain": -1}, {"abstain": 0.6, "none": 0.4}),  # the classifier leant to it, unsure
        _item("abstain", {"abstain": -1}, {"abstain": 0.1, "none": 0.9}),  # both read it off
        _item("abstain", {"abstain": 1}, {"abstain": 0.2, "none": 0.8}),  # the classifier vetoes the rules' grant
        _item("abstain", {}, {"abstain": 0.6, "none": 0.4}),  # the classifier alone, below SURE
        _item("abstain", {}, {"combine_all": 0.6, "abstain": 0.1, "none": 0.3}),  # the classifier reads another
        _item("abstain", {"abstain": 1}, {"abstain": 0.5, "none": 0.5}),  # recognised
        _item("none", {}, {"abstain": 0.75, "none": 0.25}),  # a false trigger
    ]
    counts, misses = figures(read)
    assert (counts["grants"], counts["recognised"], counts["backwards"], counts["negatives"], counts["false"]) == \
        (7, 1, 3, 1, 1)
    assert [counts[f"backwards_{c}"] for c in ("vetoed", "rules_against", "both_against")] == [1, 1, 1]
    assert [counts[f"missed_{c}"] for c in ("classifier_veto", "unsure", "elsewhere")] == [1, 1, 1]
    assert len(misses) == 7
