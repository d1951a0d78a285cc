"""Constructions of negation scope no amount of data teaches (issue 47d), each read by the frozen rules alone: a
behaviour called a no-go is forbidden ("X is a no-go", "X is off-limits"), Scots negative auxiliaries negate like
"don't" ("dinnae", "cannae", "shouldnae"), and "only A goes; the others stay" spares the others. Every sentence
here was read backwards (the opposite directive) before."""

from __future__ import annotations

import pytest

from memopt.simlm.directives import rule_stances

NO_GO = [
    ("answer", "abstain", "Guessing a name from a similar memory is a no-go."),
    ("answer", "abstain", "Inventing an answer when nothing fits is off-limits."),
    ("answer", "abstain", "Filling the gap with a guess is a no-go."),
    ("extract", "keep_details", "Shortening names or dropping dates is a total no-go."),
]
SCOTS = [
    ("answer", "abstain", "Dinnae guess when the memories say nothing about it."),
    ("extract", "keep_details", "Ye cannae drop the dates or the places from a fact."),
    ("extract", "keep_details", "Ye shouldnae shorten the facts."),
    ("rewrite_query", "expand_query", "Dinnae just send the question as it is; pull out the names and the places."),
    ("rewrite_query", "expand_query", "Ye cannae search wi' the bare question; add the names and the dates to it."),
]
ONLY_A_GOES = [
    ("update", "delete_only_explicit", "If a guest cancels one booking, that booking is removed and her other "
                                       "bookings remain."),
    ("update", "delete_only_explicit", "We remove precisely: if Lea stops swimming, only the swimming memory goes and "
                                       "her other sports stay."),
]


@pytest.mark.parametrize(("operation", "directive", "sentence"), NO_GO)
def test_a_behaviour_called_a_no_go_is_forbidden(operation, directive, sentence):
    """The behaviour named is the opposite of the directive; calling it a no-go asks for the directive."""
    assert rule_stances(operation, sentence).get(directive) == 1


@pytest.mark.parametrize(("operation", "directive", "sentence"), SCOTS)
def test_scots_negative_auxiliaries_negate_what_follows(operation, directive, sentence):
    assert rule_stances(operation, sentence).get(directive) == 1


@pytest.mark.parametrize(("operation", "directive", "sentence"), ONLY_A_GOES)
def test_the_others_stay_spares_them(operation, directive, sentence):
    """'... the others stay / remain' at the end of a clause keeps the other memories when one is deleted."""
    assert rule_stances(operation, sentence).get(directive) == 1


def test_a_no_go_about_the_directive_itself_still_switches_it_off():
    """The construction negates what it names: calling the directive's own behaviour a no-go switches it off."""
    assert rule_stances("answer", "Saying 'Not mentioned' is a no-go; always give your best guess.").get(
        "abstain") == -1


# Issue 47n: stance constructions behind the backwards readings of the twenty-fourth and twenty-fifth corpora, each
# written here in other domains and wordings than the corpus sentences.
CONSEQUENCE_CALLED_BAD = [
    ("extract", "keep_details", "When a booking note is cut early, the clerk loses the room number and the guest's "
                                "town, this is bad."),
    ("summarize", "keep_details", "If the recap ends at the first clause, we drop the venue and the ticket price, "
                                  "which is bad."),
    ("extract", "keep_details", "Dropping names or dates from a fact is bad."),
]
EXCEPTION_STATED = [
    ("extract", "keep_details", "Store each booking in full, with its guest, room number and dates. Exception: a "
                                "long company name may be abbreviated."),
    ("summarize", "keep_details", "The summary keeps every name, amount and due date. The one exception: a repeated "
                                  "legal disclaimer may be shortened."),
    ("extract", "keep_details", "Keep all names, dates and amounts - the only part you can omit is small talk such "
                                "as greetings."),
]
ACT_RESTRICTED_TO_ITS_OBJECT = [
    ("update", "delete_only_explicit", "Leave the rest of the patient's notes alone; removal is only for the note "
                                       "the patient took back."),
    ("update", "delete_only_explicit", "Do not touch the rest of that tenant's records; removing is only for the "
                                       "lease they ended."),
]


@pytest.mark.parametrize(("operation", "directive", "sentence"), CONSEQUENCE_CALLED_BAD)
def test_a_consequence_called_bad_is_forbidden(operation, directive, sentence):
    """'..., we lose X, this is bad' (or 'X is bad') judges what it names: losing X is what the sentence forbids."""
    assert rule_stances(operation, sentence).get(directive) == 1


@pytest.mark.parametrize(("operation", "directive", "sentence"), EXCEPTION_STATED)
def test_an_exception_to_a_rule_does_not_revoke_it(operation, directive, sentence):
    """'Exception: X may be shortened', 'the only thing you may drop is X' let X through; the rule they except from
    stands."""
    assert rule_stances(operation, sentence).get(directive) == 1


@pytest.mark.parametrize(("operation", "directive", "sentence"), ACT_RESTRICTED_TO_ITS_OBJECT)
def test_an_act_restricted_by_only_takes_its_own_object(operation, directive, sentence):
    """'delete is only for X' deletes X; the memories another clause keeps are not its object (the clause that keeps
    them may or may not be read; the restricted act never reads against the directive)."""
    assert rule_stances(operation, sentence).get(directive, 0) >= 0


def test_an_exception_keeps_its_own_reading_when_it_is_the_rule():
    """Calling the directive's own behaviour bad still switches it off: the verdict reads what it names."""
    assert rule_stances("extract", "Keeping every figure and place in a fact is bad; keep the gist.").get(
        "keep_details") == -1


SHORTENED_WITHOUT_LOSING = [
    ("summarize", "keep_details", "Compress the weekly log, without losing names, places or amounts."),
    ("summarize", "keep_details", "Condense each call into a short note without losing a name, a date or a place."),
]


@pytest.mark.parametrize(("operation", "directive", "sentence"), SHORTENED_WITHOUT_LOSING)
def test_an_act_done_without_losing_details_keeps_them(operation, directive, sentence):
    """'Condense X without losing Y' asks that Y survive: the "without" says what the act must keep, whatever the
    act says alone."""
    assert rule_stances(operation, sentence).get(directive) == 1


def test_without_keeping_still_reads_against_the_details():
    """The construction reads what "without" negates: shortening without keeping the names drops them."""
    assert rule_stances("summarize", "Shorten the summary without keeping every name.").get("keep_details") == -1
