"""SimLM's directive reading on the eleventh corpus: written by a new author, measured once.

tests/fixtures/directive_corpus_eleventh.yaml (issue 21) was written by a new author who did not open SimLM's reader
(memopt/simlm/), the earlier corpora, their tests, the docs or the git log: from the catalogue's id, operations and
behaviour columns and issue 21's text, in voices no earlier author used: RFC 2119 specifications, clinical charting,
an airline operations manual, docstrings and code comments, Jira tickets and commit messages, a teacher, recipes,
radio brevity, HR policy, insurance clauses, tweets, Scottish, Irish, Australian and South African English, prompts
translated from Spanish, German, Japanese, Hindi, Arabic and French, Socratic questions, "except when" / "only if" /
"at no point" / "under no circumstances ... unless", role play; its `none` items include definitions of a memory
operation's output labels with no rule about when to use them. It was committed alone, after the expected figures
of the learned readers were declared in docs/simlm.md, and measured once with the reader after its seventh pass,
with the figures pinned below (since raised by the eighth pass): a change to the reader that loses a sentence fails
here. The same measurement of the learned readers (trained on the third to tenth corpora) is pinned in
tests/test_directive_reader_across_authors.py.

Items are counted as in tests/test_directive_reading_tenth.py. Print the figures with
``python -m tests.test_directive_reading_eleventh``.
"""

from __future__ import annotations

from tests.directive_corpora import check_corpus, check_measured, corpus_figures, load_corpus, report

ITEMS = load_corpus("eleventh")

# The one measurement (reader after its seventh pass): 135 of 168 recognised (80.4 %), 9 read backwards, 3 also
# turning on another directive (1.8 %), 6 of 136 false triggers (4.4 %). Below issue 21's targets. Tuned on since:
# the eighth pass (evaluations and extraposed subjects, `memopt.simlm.prohibitions`) gives 137 and 7 read backwards.
MEASURED = {"recognised": 137, "backwards": 7, "false": 6, "cross": 3}


def test_the_eleventh_corpus_is_valid_and_covers_every_directive():
    check_corpus(ITEMS)


def test_the_eleventh_corpus_at_the_figures_pinned():
    """At least the figures pinned in ``MEASURED`` (see the module docstring)."""
    check_measured(corpus_figures(ITEMS), (168, 136), MEASURED)


if __name__ == "__main__":
    report("eleventh")
