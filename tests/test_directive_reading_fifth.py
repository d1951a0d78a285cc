"""SimLM's directive reading on the fifth corpus: written by a new author, measured once.

tests/fixtures/directive_corpus_fifth.yaml (issue 21) was written by a new author who did not open SimLM's reader
(memopt/simlm/), the earlier corpora, their tests, docs/simlm.md or the git log: from the catalogue's id, operations
and behaviour columns of `memopt directives --markdown` and issue 21's text (its header says exactly what was read),
in the styles of real prompts (RFC 2119 rules, docstrings, product notes, Do's and Don'ts, markdown headings, XML,
rationale-first sentences, non-native English), with near misses of many kinds (other components' jobs, plans,
changelogs, counterfactuals, adjacent rules such as date formats). It was committed alone, and measured once, after
the reader's fourth pass (which tuned on the fourth corpus, by construction families), with the figures pinned
below. Since then it is TUNING material: the reader's fifth pass (scope constructions that read instructions
backwards, tests/test_directive_reading_scope.py) looked at its misses, so its figures no longer say how the reader
does on an unseen author; a sixth corpus, written meanwhile by another author, is the next held-out measurement. The
pins below are the figures after the fifth pass and may only improve; it does not yet meet issue 21's targets.

Each item names the one operation its sentence is sent to. An "on" item must turn on its directive (stance +1) in
that operation; read backwards is stance -1; it also turns on another directive when any other of that operation's
directives goes on. A ``none`` item is a false trigger when it turns on any directive of its operation. Print the
figures with ``python -m tests.test_directive_reading_fifth``.
"""

from __future__ import annotations

from tests.directive_corpora import check_corpus, check_measured, corpus_figures, load_corpus, report

ITEMS = load_corpus("fifth")

# The one measurement (reader of main at 339e671): 143 of 163 recognised (87.7 %), 9 read backwards, 1 also turning
# on another directive (0.6 %), 10 of 124 false triggers (8.1 %). Below issue 21's targets (>= 92 %, 0, <= 5 %).
# For comparison, the reader before its fourth pass (main at 049b5a2): 141 (86.5 %), 10 backwards, 12 false (9.7 %).
# After the fifth pass (tuned with this corpus in view, so no longer held out): 149 (91.4 %), 2 backwards, 10 false.
# After the sixth pass: 150 (92.0 %), 0 backwards, 10 false.
# After the seventh pass (classes of wording, tuned on the sixth and seventh corpora): 154 (94.5 %), 0 backwards,
# 8 false (6.5 %).
MEASURED = {"recognised": 154, "backwards": 0, "false": 8, "cross": 1}


def test_the_fifth_corpus_is_valid_and_covers_every_directive():
    check_corpus(ITEMS)


def test_the_fifth_corpus_at_the_figures_pinned():
    """At least the figures pinned in ``MEASURED`` (see the module docstring)."""
    check_measured(corpus_figures(ITEMS), (163, 124), MEASURED)


if __name__ == "__main__":
    report("fifth")
