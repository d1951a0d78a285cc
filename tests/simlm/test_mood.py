"""Sentences that plan, imagine, report, describe or hand the work to another component instruct nothing.

Until issue 47 the rules read these (issue 21's third, fourth and seventh passes): a mood module (a pronoun with
"would" / "might" / "could", a future marker with a modal, plans on a roadmap, a third party's quoted request) and a
refusal of work done elsewhere ("X is handled downstream", "X belongs to the ingestion step", which read as switching
X off). Issue 47 removed both: held out by author over all fourteen corpora, SimLM's reader recognised 93.6 % with
2.6 % false triggers and 13 read backwards without them (and with `OVERRIDE_PLAIN`), against 93.6 %, 2.5 % and 11
with them (docs/simlm-reader.md): the corpora hold many plans, TODOs, changelogs and other components' jobs, and the
classifier learnt them as instructing nothing. On these sentences, worded for the rules' tests, it does worse: the
ones marked ``misread`` turn a directive on (the rules now grant it and the classifier gives it 0.3 or more). The
test holds SimLM to the others, and to the misreadings until they are mended.
"""

from __future__ import annotations

import pytest

from memopt.simlm import directive_stances

MOOD = [
    ("answer", "We plan to let the model answer 'unknown' in a future release.", ""),
    ("answer", "Merging related memories is on the backlog for a later sprint.", ""),
    ("extract", "Were we to capture both speakers, the store would grow quickly.", ""),
    ("extract", "Had the extractor resolved relative dates, these answers would have been right.", ""),
    # mended by the 16th and 17th corpora:
    ("rewrite_query", "The team is discussing whether to expand queries with synonyms.", ""),
    ("update", "If we ever add deletion limits, only retracted memories might be removed.", ""),  # 22nd, 23rd
    ("summarize", "Keeping every detail is planned for version 3.", ""),
    ("answer", "We are thinking about combining several memories per answer next year.", ""),
    ("extract", "Capturing every participant is a proposal under review.", "misread"),
    ("extract", "Transcripts usually include several speakers and many dates.", ""),
    ("summarize", "The transcripts contain names, dates and prices.", ""),
    ("summarize", "Chats are usually short and mention a place or two.", ""),
    ("summarize", "Sessions tend to contain long sentences full of names and numbers.", "misread"),
    ("extract", "In a calendar app you would convert relative dates; here they stay as spoken.", ""),
    ("answer", "Elsewhere one might pull every memory together into the answer.", "misread"),
    ("rewrite_query", "Synonym lists may be appended to the query in a future release.", ""),
    # mended by the 14th and 15th corpora, misread again since the 16th and 17th joined:
    ("extract", "Resolving relative dates could be switched on later.", ""),
    ("extract", 'If the user requests "every detail of the itinerary", store the itinerary as one memory.', ""),
]


ELSEWHERE = [
    ('summarize', 'Relative dates are resolved by the calendar service before you see the text.'),
    ('rewrite_query', "Synonyms are added by the search backend's analyser, so forward the question unchanged."),
    ('answer', 'A separate ranking service combines the memories, so answer from the one you are given.'),
    ('summarize', 'An upstream parser keeps every number in a table; the summary can round them.'),
    ('extract', 'Converting relative dates belongs to the ingestion step.'),
    ('answer', 'Relative dates have already been converted upstream; the text you get is absolute.'),
    ('extract', 'Resolving relative dates is handled by the scheduler.'),
    ('extract', 'What the other speaker says is background only.'),
    ('extract', 'Resolving relative dates happens downstream, so copy time words as spoken.'),
    ('rewrite_query', 'Synonym expansion is performed inside the search engine.'),
    ('extract', "Whether dates are absolute is another team's responsibility."),
]


@pytest.mark.parametrize(("op", "text"), ELSEWHERE)
def test_another_components_work_turns_nothing_on(op: str, text: str):
    """SimLM reads each as nothing (before issue 47 the rules read most as switching the directive off)."""
    assert directive_stances(op, text) == {}


@pytest.mark.parametrize(("op", "text", "note"), MOOD)
def test_a_sentence_in_another_mood_turns_nothing_on(op: str, text: str, note: str):
    on = [k for k, v in directive_stances(op, text).items() if v > 0]
    assert bool(on) == (note == "misread"), (on, note)
