"""SimLM's directive reading on the thirteenth corpus: written by a new author, measured once.

tests/fixtures/directive_corpus_thirteenth.yaml (issue 21) was written by a new author who did not open SimLM's
reader (memopt/simlm/), the earlier corpora, their tests, the docs or the git log: from the catalogue's id,
operations and behaviour columns and issue 21's text, in the voices of fields far from prompts (a pharmacist, air
traffic control, a wedding planner, a bank compliance memo, a genealogist, a beekeeper, a mountaineering briefing,
an eighteenth-century letter, a monastic rule, a Shakespearean pastiche, limericks), Welsh and New Zealand English,
Canadian Franglais, and prompts translated from Brazilian Portuguese, Turkish, Korean, Hebrew, Finnish and Thai. It
was committed alone, after the expected figures were declared in docs/simlm.md, and measured once with the reader
after its eighth pass (and a fix for a crash this corpus found first: "... and someone gets hurt"), with the figures
pinned below: a change to the reader that loses a sentence fails here. The same measurement of the learned readers
(trained on the third to twelfth corpora) is pinned in tests/test_directive_reader_across_authors.py.

Items are counted as in tests/test_directive_reading_tenth.py. Print the figures with
``python -m tests.test_directive_reading_thirteenth``.
"""

from __future__ import annotations

from tests.directive_corpora import check_corpus, check_measured, corpus_figures, load_corpus, report

ITEMS = load_corpus("thirteenth")

# The one measurement (reader after its eighth pass): 108 of 166 recognised (65.1 %), 8 read backwards, 2 also
# turning on another directive (1.2 %), 5 of 139 false triggers (3.6 %). Below issue 21's targets.
MEASURED = {"recognised": 108, "backwards": 8, "false": 5, "cross": 2}


def test_the_thirteenth_corpus_is_valid_and_covers_every_directive():
    check_corpus(ITEMS)


def test_the_thirteenth_corpus_at_the_figures_pinned():
    """At least the figures pinned in ``MEASURED`` (see the module docstring)."""
    check_measured(corpus_figures(ITEMS), (166, 139), MEASURED)


if __name__ == "__main__":
    report("thirteenth")
