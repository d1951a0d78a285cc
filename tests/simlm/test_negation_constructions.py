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
