"""The across-authors baseline (`tests.directive_reader_across_authors`) trains on the other authors and counts the
held-out author's whole corpus."""

from __future__ import annotations

import pytest

from tests.directive_corpora import corpus_figures, load_corpus
from tests.directive_reader_across_authors import AUTHORS, held_out_figures


@pytest.mark.slow  # trains two classifiers (CI runs it with -m slow)
def test_the_baseline_counts_every_item_of_the_held_out_author():
    figures = corpus_figures(load_corpus("eighth"))
    every_other, earlier = held_out_figures("eighth"), held_out_figures("fourth", earlier_only=True)
    assert (every_other["grants"], every_other["negatives"]) == (figures["grants"], figures["negatives"])
    assert every_other["grants"] / 2 < every_other["recognised"] <= every_other["grants"]
    assert 0 <= every_other["false"] < every_other["negatives"] / 2
    assert earlier["grants"] == corpus_figures(load_corpus("fourth"))["grants"] and AUTHORS[0] == "third"
