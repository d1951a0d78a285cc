"""Scope constructions that read instructions backwards (issue 21, the reader's fifth pass), each case worded here.

Every corpus by another author had sentences that ask FOR a directive and were read AGAINST it (stance -1), the worst
error: appending such an instruction switches the directive off. Written before the fifth pass's rules, broader than
the fifth corpus (each ON case, and the "never answer with:" control, reads wrong on main at 7253824): a "Don't:" /
"Avoid:" label over a bad example; a literal reply after a colon ("reply exactly: not mentioned") that is a quote,
not a negation; "X is not enough / not sufficient" whose negation covers X, not the instruction; a gapped contrast
("drop the small talk, but never the names") whose negation carries the elided verb; "after the first clause" as a
preposition inside a negation's scope; an exception whose short list goes on past a comma. The controls are clear
prohibitions and must stay at -1.
"""

from __future__ import annotations

import pytest

from memopt.simlm import directive_stances

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


@pytest.mark.parametrize(("op", "directive", "text"), ON)
def test_a_sentence_asking_for_the_directive_turns_it_on(op: str, directive: str, text: str):
    assert directive_stances(op, text).get(directive, 0) == 1


@pytest.mark.parametrize(("op", "directive", "text"), AGAINST)
def test_a_clear_prohibition_stays_against(op: str, directive: str, text: str):
    assert directive_stances(op, text).get(directive, 0) == -1
