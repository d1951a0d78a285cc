"""SimLM's directive reading on the tenth corpus: written by a new author, measured once.

tests/fixtures/directive_corpus_tenth.yaml (issue 21) was written by a new author who did not open SimLM's reader
(memopt/simlm/), the earlier corpora, their tests, the docs or the git log: from the catalogue's id, operations and
behaviour columns (four columns of the first table of `memopt directives --markdown`) and issue 21's text, in
voices unlike the earlier authors': configuration comments as sentences, support macros, a product manager's chat
messages, code-review comments, contract language, a children's app, a lab notebook, a podcast, a game master,
accessibility guidelines, Indian, Nigerian and Singaporean English, prompts translated from Portuguese, Korean,
Russian, Italian and Turkish, double negatives, conditionals, passives and questions. It was committed alone, after
the expected figures of the learned readers were declared in docs/simlm.md, and measured once with the reader after
its seventh pass (no pass since), with the figures pinned below: a change to the reader that loses a sentence fails
here. Tuning the reader on its misses makes it tuning material; say so here if that happens. The same measurement
of the learned readers (`tests/directive_reader_across_authors.py`, trained on the third to ninth corpora) is pinned
in tests/test_directive_reader_across_authors.py.

Each item names the one operation its sentence is sent to. An "on" item must turn on its directive (stance +1) in
that operation; read backwards is stance -1; it also turns on another directive when any other of that operation's
directives goes on. A ``none`` item is a false trigger when it turns on any directive of its operation. Print the
figures with ``python -m tests.test_directive_reading_tenth``.
"""

from __future__ import annotations

from tests.directive_corpora import check_corpus, check_measured, corpus_figures, load_corpus, report

ITEMS = load_corpus("tenth")

# The one measurement (reader after its seventh pass): 136 of 158 recognised (86.1 %), 4 read backwards, 4 also
# turning on another directive (2.5 %), 10 of 134 false triggers (7.5 %). Below issue 21's targets.
MEASURED = {"recognised": 136, "backwards": 4, "false": 10, "cross": 4}


def test_the_tenth_corpus_is_valid_and_covers_every_directive():
    check_corpus(ITEMS)


def test_the_tenth_corpus_at_the_figures_pinned():
    """At least the figures pinned in ``MEASURED`` (see the module docstring)."""
    check_measured(corpus_figures(ITEMS), (158, 134), MEASURED)


if __name__ == "__main__":
    report("tenth")
