"""SimLM's directive reading on the seventh corpus: written by a new author, measured once.

tests/fixtures/directive_corpus_seventh.yaml (issue 21) was written by a new author who did not open SimLM's reader
(memopt/simlm/), the earlier corpora, their tests, docs/simlm.md or the git log: from the catalogue's id, operations
and behaviour columns of `memopt directives --markdown` (the first table, four columns) and issue 21's text, in
voices the earlier corpora did not use (JSON and YAML config values, XML-tagged sections, markdown headings,
numbered rules, terse shorthand, British and non-native English, legal drafting, questions as instructions,
few-shot demonstrations) and of products (LangChain, LlamaIndex, the OpenAI cookbook, Anthropic-style system
prompts, the Vercel AI SDK, Rasa, CrewAI, Mem0, Letta, Zep; support, finance, HR, healthcare, education, gaming,
GDPR). It was committed alone and measured once, after the reader's sixth pass (which tuned on the sixth corpus),
with the figures pinned below: a change to the reader that loses a sentence fails here.

It is tuning material since the reader's seventh pass: that pass read its misses (with the sixth corpus') and worked on
the classes of wording they fall into (configuration values, contrast scope, negative quantifier objects, parties named
by role, questions and conditions, other components' work, descriptions of the input, few-shot layouts, lexicons by
meaning group; `tests/test_directive_reading_classes.py`), so its figures after that pass say what the reader keeps, not
how it reads an unseen author. The one-time measurement stays below as history.

Each item names the one operation its sentence is sent to. An "on" item must turn on its directive (stance +1) in
that operation; read backwards is stance -1; it also turns on another directive when any other of that operation's
directives goes on. A ``none`` item is a false trigger when it turns on any directive of its operation. Print the
figures with ``python -m tests.test_directive_reading_seventh``.
"""

from __future__ import annotations

from tests.directive_corpora import check_corpus, check_measured, corpus_figures, load_corpus, report

ITEMS = load_corpus("seventh")

# The one measurement (reader after its sixth pass): 117 of 154 recognised (76.0 %), 5 read backwards, 2 also turning
# on another directive (1.3 %), 9 of 120 false triggers (7.5 %). Below issue 21's targets, and below every earlier
# new author's corpus (82-88 %): the JSON config values alone are 7 of the 37 misses.
# After the seventh pass (tuned on this corpus, so no longer held out): 149 of 154 (96.8 %), 0 backwards, 2 cross
# (1.3 %), 4 of 120 false (3.3 %).
MEASURED = {"recognised": 149, "backwards": 0, "false": 4, "cross": 2}


def test_the_seventh_corpus_is_valid_and_covers_every_directive():
    check_corpus(ITEMS)


def test_the_seventh_corpus_at_the_figures_pinned():
    """At least the figures pinned in ``MEASURED`` (see the module docstring)."""
    check_measured(corpus_figures(ITEMS), (154, 120), MEASURED)


if __name__ == "__main__":
    report("seventh")
