"""SimLM's directive reading on the ninth corpus: written by a new author, measured once.

tests/fixtures/directive_corpus_ninth.yaml (issue 21) was written by a new author who did not open SimLM's reader
(memopt/simlm/), the earlier corpora, their tests, the docs or the git log: from the catalogue's id, operations and
behaviour columns of `memopt directives --markdown` (the first table, four columns) and issue 21's text, in the
voices of people new to prompts (a small-business owner, a grandparent, a student), of run-on sentences and short
fragments, of prompts translated from Spanish, French, German, Japanese and Arabic, of method sections, product
requirements, A/B test notes and blog advice, and of products (voice assistants, medical scribes, insurance claims,
museum guides, coaching, cooking and journalling apps, a crisis line, legal discovery, HR onboarding). It was
committed alone and measured once, after the reader's seventh pass, with the figures pinned below: a change to the
reader that loses a sentence fails here. Tuning the reader on its misses makes it tuning material; say so here if
that happens. The same measurement of the learned baseline (`tests/directive_reader_across_authors.py`, trained on
the third to eighth corpora) is in docs/simlm.md.

Each item names the one operation its sentence is sent to. An "on" item must turn on its directive (stance +1) in
that operation; read backwards is stance -1; it also turns on another directive when any other of that operation's
directives goes on. A ``none`` item is a false trigger when it turns on any directive of its operation. Print the
figures with ``python -m tests.test_directive_reading_ninth``.
"""

from __future__ import annotations

from tests.directive_corpora import check_corpus, check_measured, corpus_figures, load_corpus, report

ITEMS = load_corpus("ninth")

# The one measurement (reader after its seventh pass): 121 of 146 recognised (82.9 %), 4 read backwards, 4 also
# turning on another directive (2.7 %), 16 of 125 false triggers (12.8 %). Below issue 21's targets. The learned
# baseline, trained on the third to eighth corpora and measured once on this one: 141 of 146 (96.6 %), 9 of 125 false.
MEASURED = {"recognised": 121, "backwards": 4, "false": 16, "cross": 4}


def test_the_ninth_corpus_is_valid_and_covers_every_directive():
    check_corpus(ITEMS)


def test_the_ninth_corpus_at_the_figures_pinned():
    """At least the figures pinned in ``MEASURED`` (see the module docstring)."""
    check_measured(corpus_figures(ITEMS), (146, 125), MEASURED)


if __name__ == "__main__":
    report("ninth")
