"""SimLM's directive reading on the third corpus: written by another author, measured once, tuning material since.

tests/fixtures/directive_corpus_third.yaml (issue 21) was written by a second author who did not open SimLM's reader
(memopt/simlm/), the earlier corpora or their tests: from the directive names, operations and one-line meanings, in
the styles of real memory-system prompts (Mem0, Zep, Letta, LangChain, LlamaIndex, the OpenAI cookbook; bullets,
``key: value`` lines, legal prose, non-native English, passive prohibitions, "unless", "rather than", "refrain").
They saw the first characters of the catalogue's cue rows in `memopt directives` and the constructions issue 21
lists; each item carries a style label, so those constructions can be counted apart. It was committed alone, and
measured once, after the reader's last change (reader of main at 2000f84): 147 of 173 recognised (85.0 %), 7 read
backwards, 2 also turning on another directive (1.2 %), 12 of 121 false triggers (9.9 %), below issue 21's targets
(>= 92 %, 0 backwards, <= 5 %).

Its misses have been read since and the reader fixed on them (mood: hypotheticals, plans and reported speech;
deferral to other components; preference comparatives; "not a reason"; safety refusals; lexicons by meaning group;
the constructions in tests/test_directive_reading_rules.py), so it is tuning material now, like the fresh corpus:
the reader must keep the targets on it. It is no evidence of how the reader handles unseen English; a fourth
corpus by another author, measured once, is.

Each item names the one operation its sentence is sent to. An "on" item must turn on its directive (stance +1) in
that operation; read backwards is stance −1; it also turns on another directive when any other of that operation's
directives goes on. A ``none`` item is a false trigger when it turns on any directive of its operation. Print the
figures with ``python -m tests.test_directive_reading_third``.
"""

from __future__ import annotations

from tests.directive_corpora import check_corpus, check_targets, corpus_figures, load_corpus, report

ITEMS = load_corpus("third")


def test_the_third_corpus_is_valid_and_covers_every_directive():
    check_corpus(ITEMS)


def test_the_once_heldout_third_corpus_now_meets_the_targets():
    """Issue 21's targets on the third corpus, tuning material since its one measurement (module docstring)."""
    check_targets(corpus_figures(ITEMS), (173, 121))


if __name__ == "__main__":
    report("third")
