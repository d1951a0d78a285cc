"""SimLM's directive reading on the eighth corpus: written by a new author, measured once.

tests/fixtures/directive_corpus_eighth.yaml (issue 21) was written by a new author who did not open SimLM's reader
(memopt/simlm/), the earlier corpora, their tests, the docs or the git log: from the catalogue's id, operations and
behaviour columns of `memopt directives --markdown` (the first table, four columns) and issue 21's text, in the
voices of rules and configs (RFC 2119, user stories, acceptance criteria, do / don't lists and tables, negative
examples with their correction, Python and TypeScript comments, Jinja templates, YAML / TOML / JSON entries,
changelogs, reviewer and on-call notes), of English as written in India, Nigeria, Singapore and China, of startup
chat with emoji, regulators, military orders, rubrics and game-master notes, and of products (travel, real estate,
legal intake, therapy journaling, fitness, e-commerce, IT helpdesk, banking KYC, dating, a newsroom archive, a
kids' tutor). It was committed alone and measured once, after the reader's seventh pass (which tuned on the sixth
and seventh corpora by classes of wording), with the figures pinned below: a change to the reader that loses a
sentence fails here. Tuning the reader on its misses makes it tuning material; say so here if that happens.

Each item names the one operation its sentence is sent to. An "on" item must turn on its directive (stance +1) in
that operation; read backwards is stance -1; it also turns on another directive when any other of that operation's
directives goes on. A ``none`` item is a false trigger when it turns on any directive of its operation. Print the
figures with ``python -m tests.test_directive_reading_eighth``.
"""

from __future__ import annotations

from tests.directive_corpora import check_corpus, check_measured, corpus_figures, load_corpus, report

ITEMS = load_corpus("eighth")

# The one measurement (reader after its seventh pass): 112 of 146 recognised (76.7 %), 7 read backwards, 2 also
# turning on another directive (1.4 %), 12 of 123 false triggers (9.8 %). Below issue 21's targets, where the seventh
# corpus was before the pass that took it to 96.8 %.
MEASURED = {"recognised": 112, "backwards": 7, "false": 12, "cross": 2}


def test_the_eighth_corpus_is_valid_and_covers_every_directive():
    check_corpus(ITEMS)


def test_the_eighth_corpus_at_the_figures_pinned():
    """At least the figures pinned in ``MEASURED`` (see the module docstring)."""
    check_measured(corpus_figures(ITEMS), (146, 123), MEASURED)


if __name__ == "__main__":
    report("eighth")
