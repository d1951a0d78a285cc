"""Scope constructions that read instructions backwards (issue 21, the reader's fifth pass), each case worded here.

Every corpus by another author had sentences that ask FOR a directive and were read AGAINST it (stance -1), the worst
error: appending such an instruction switches the directive off. Written before the fifth pass's rules, broader than
the fifth corpus (each ON case, and the "never answer with:" control, reads wrong on main at 7253824): a "Don't:" /
"Avoid:" label over a bad example; a literal reply after a colon ("reply exactly: not mentioned") that is a quote,
not a negation; "X is not enough / not sufficient" whose negation covers X, not the instruction; a gapped contrast
("drop the small talk, but never the names") whose negation carries the elided verb; "after the first clause" as a
preposition inside a negation's scope; an exception whose short list goes on past a comma. The controls are clear
prohibitions and must stay at -1.

Since issue 47 these cases test the rules alone (`rule_stances`): SimLM reads with the agreement of the rules and a
classifier (`memopt.simlm.learned`), and the rules are frozen, changed only for a construction no amount of data
can teach, with a case of its own.
"""

from __future__ import annotations

import pytest

from memopt.simlm.directives import rule_stances

ON = [
    # a "Don't:" label over a bad example, a "Do:" over the good one
    ("answer", "abstain", "Don't: make up a plausible answer. Do: say the memories don't cover it."),
    ("extract", "all_participants", "Avoid: skipping what the second speaker tells you about herself. "
                                    "Prefer: keeping it under her name."),
    ("extract", "all_participants", "Do not: ignore the other participant's facts about themselves."),
    # a literal reply after a colon is a quote: its "not" negates nothing
    ("answer", "abstain", "NEVER INVENT. When no memory covers the question, answer with: not known."),
    ("answer", "abstain", "No guessing allowed. If the memories say nothing about it, respond exactly: Not in memory."),
    ("answer", "abstain", "Do not make things up; when the context lacks it, reply: not mentioned."),
    # "X is not enough": the negation covers X, the instruction is what else is needed
    ("update", "update_on_contradiction", "Sharing a topic is not sufficient for an update; the new fact must also "
                                          "contradict the stored one."),
    # a gapped contrast: "but never the names" = "but never drop the names"
    ("summarize", "keep_details", "Drop the small talk if you must, but never the names or the numbers."),
    ("extract", "keep_details", "Remove greetings freely, but never the places, amounts or dates a fact mentions."),
    # an exception whose list goes on past its comma: "unless every name, number and place survives"
    ("summarize", "keep_details", "Don't shorten a fact unless every person, date and amount in it survives the "
                                  "shortening."),
    ("extract", "keep_details", "Never trim a memory unless each name, place and figure it holds is still there "
                                "after trimming."),
    # "after the first clause" is a preposition phrase inside the negation
    ("extract", "keep_details", "Keep whole sentences with their names and dates; do not stop after the first clause."),
]

AGAINST = [
    ("extract", "resolve_dates", "Do not resolve relative dates."),
    ("summarize", "keep_details", "Drop the names if you like."),
    ("summarize", "keep_details", "Shorten every fact to a few words."),
    ("extract", "keep_details", "Cut each fact after its first clause."),
    ("summarize", "keep_details", "Don't keep the names unless the user asks for them."),
    ("update", "update_on_contradiction", "Update a memory whenever the new fact is about the same topic."),
    ("update", "delete_only_explicit", "Delete every memory related to a retracted fact."),
    ("answer", "abstain", "Don't say 'Not mentioned'; always answer."),
    ("answer", "abstain", "Never answer with: Not mentioned."),
    ("extract", "all_participants", "Only extract facts about the user."),
    ("extract", "all_participants", "Don't: keep what the second speaker says. Do: keep only the user's facts."),
]


# The sixth pass (worded here, each read backwards or missed before it): where a negation or an "against" cue reaches
# is decided by the sentence's structure, not by the words near it.
SIXTH_PASS_ON = [
    # "just / merely because X" names a ground the sentence weighs, not a reason it gives
    ("extract", "all_participants", "Ignoring a statement merely because the other speaker made it is a mistake."),
    ("extract", "all_participants", "Skipping a fact simply because it came from the second participant is an error."),
    ("extract", "all_participants", "Never discard a fact merely because the second participant stated it."),
    # the same person and the same object together name one memory, not a shared topic
    ("update", "delete_only_explicit", "When a hobby is retracted, remove the memory with the same person and the "
                                       "same activity, and nothing more."),
    ("update", "delete_only_explicit", "Only the memory sharing the same person and the same object is to be deleted."),
    ("update", "delete_only_explicit", "Erase just the memory about the same person and the same thing."),
    ("update", "delete_only_explicit", "A retraction deletes exactly one memory: same person, same object."),
    # a subject has no modal of its own: "X shall V and shall not be confined" negates the second predicate only
    ("answer", "combine_all", "The reply must draw on every relevant memory and must not be limited to a single item."),
    ("answer", "combine_all", "Responses shall use all matching entries and shall not be restricted to one entry."),
    # a "no" after a preposition negates its noun phrase, not the verb after it
    ("answer", "abstain", "Queries with no matching memory return 'unknown'."),
    ("answer", "abstain", "Requests with no backing note respond 'not on record'."),
    # an aside in parentheses comments on the sentence; it does not outvote it
    ("answer", "abstain", "Reply 'Not mentioned' when nothing supports an answer (guessing used to cost us points)."),
    ("answer", "abstain", "If the context is silent, say 'Not mentioned' (we measured fabricated answers in May)."),
    # a docstring's triple quotes delimit the instructions; they do not quote an example
    ("summarize", "keep_details", '"""Summarise the session. Keep every name, number and place exactly as said."""'),
    ("rewrite_query", "expand_query", "'''Turn the question into a search query and add related terms.'''"),
]

# where the reader cannot tell, it abstains (stance 0) rather than read the sentence backwards
SIXTH_PASS_NOT_AGAINST = [
    # a requirement met only in a "because" clause is not met: the rationale explains, it does not instruct
    ("update", "update_on_contradiction", "Only use UPDATE when a fact really changed; last week's run went wrong "
                                          "because it replaced memories on the same topic."),
    # the same person and the same object name one memory: deleting it is no deletion by shared topic
    ("update", "delete_only_explicit", "When a fact is withdrawn, remove the memory about the same person and the "
                                       "same thing."),
    ("update", "delete_only_explicit", "When a hobby is dropped, erase the memory on the same person and same hobby."),
    # answering an unsupported question with a quoted 'not known' is abstaining, not guessing
    ("answer", "abstain", "A question with no support in the memories gets 'Not mentioned' as its reply."),
]

SIXTH_PASS_AGAINST = [
    ("update", "delete_only_explicit", "Delete every memory about the same person."),
    ("update", "update_on_contradiction", "Update a memory whenever the new fact is on the same subject."),
    ("answer", "combine_all", "The reply shall draw on one memory only."),
    ("answer", "abstain", "Answer every question, even one with no support; never reply 'unknown'."),
    ("extract", "all_participants", "Skip a fact whenever the second participant stated it."),
    ("rewrite_query", "expand_query", '"""Return the question verbatim as the query."""'),
]


@pytest.mark.parametrize(("op", "directive", "text"), ON + SIXTH_PASS_ON)
def test_a_sentence_asking_for_the_directive_turns_it_on(op: str, directive: str, text: str):
    assert rule_stances(op, text).get(directive, 0) == 1


@pytest.mark.parametrize(("op", "directive", "text"), AGAINST + SIXTH_PASS_AGAINST)
def test_a_clear_prohibition_stays_against(op: str, directive: str, text: str):
    assert rule_stances(op, text).get(directive, 0) == -1


@pytest.mark.parametrize(("op", "directive", "text"), SIXTH_PASS_NOT_AGAINST)
def test_an_unclear_sentence_is_not_read_against(op: str, directive: str, text: str):
    assert rule_stances(op, text).get(directive, 0) >= 0
