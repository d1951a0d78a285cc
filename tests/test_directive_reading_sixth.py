"""SimLM's directive reading on the sixth corpus: written by a new author, measured once, tuned on since.

tests/fixtures/directive_corpus_sixth.yaml (issue 21) was written by a new author who did not open SimLM's reader
(memopt/simlm/), the earlier corpora, their tests, docs/simlm.md or the git log: from the catalogue's id, operations
and behaviour columns of `memopt directives --markdown` and issue 21's text (they also saw the header row of every
column and about 21 concept names of the lexicon's first column while finding the layout), in the voices of people
who write prompts (a terse engineer, a consultant, a lawyer, a PM's ticket, templates with placeholders, questions
as instructions, failure stories) and of products (ChatGPT-style memory, support, tutoring, healthcare intake,
sales CRM, LangGraph, CrewAI, AutoGen, Semantic Kernel, Haystack, DSPy docstrings, Mem0, Zep, Letta, Cognee). It
was committed alone, and measured once, after the reader's fifth pass (which tuned on the fifth corpus), with the
figures pinned below. Since then it is TUNING material: the reader's sixth pass (scope rules against backwards
readings, tests/test_directive_reading_scope.py) looked at its misses, so its figures no longer say how the reader
does on an unseen author; a seventh corpus, written meanwhile by another author, is the next held-out measurement.
The pins below are the figures after the sixth pass and may only improve; it does not yet meet issue 21's targets.

Each item names the one operation its sentence is sent to. An "on" item must turn on its directive (stance +1) in
that operation; read backwards is stance -1; it also turns on another directive when any other of that operation's
directives goes on. A ``none`` item is a false trigger when it turns on any directive of its operation. Print the
figures with ``python -m tests.test_directive_reading_sixth``.
"""

from __future__ import annotations

from tests.directive_corpora import check_corpus, check_measured, corpus_figures, load_corpus, report

ITEMS = load_corpus("sixth")

# The one measurement (reader after its fifth pass, main + i21reader5): 136 of 166 recognised (81.9 %), 5 read
# backwards, 3 also turning on another directive (1.8 %), 10 of 116 false triggers (8.6 %). Below issue 21's targets.
# After the sixth pass (tuned with this corpus in view, so no longer held out): 145 (87.3 %), 0 backwards, 10 false.
# After the seventh pass (classes of wording, this corpus' misses among the material): 154 (92.8 %), 0 backwards,
# 9 false (7.8 %).
MEASURED = {"recognised": 154, "backwards": 0, "false": 9, "cross": 3}


def test_the_sixth_corpus_is_valid_and_covers_every_directive():
    check_corpus(ITEMS)


def test_the_sixth_corpus_at_the_figures_pinned():
    """At least the figures pinned in ``MEASURED`` (see the module docstring)."""
    check_measured(corpus_figures(ITEMS), (166, 116), MEASURED)


if __name__ == "__main__":
    report("sixth")
