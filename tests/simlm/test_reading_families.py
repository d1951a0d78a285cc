"""Families of constructions a prompt writer uses, each case worded here (issue 21, the reader's fourth pass).

Written before the fourth pass's rules, broader than any corpus sentence (32 of the 45 fail on the reader before the
pass, main at c8ee8b9; the XML and "so ... that" cases were added during it): plans, counterfactuals and wishes that
instruct nothing; work already done elsewhere; demonstrations (an input with the output it should give, a good and a
bad example) whose observable effect is a directive's behaviour; preferences and value judgements ("better to X than
Y", "X is worthless"); a persona or goal that states the behaviour; FAQ answers; domain synonyms; markup; and refusals
or data descriptions that must not trigger anything.

Since issue 47 these cases test the rules alone (`rule_stances`): SimLM reads with the agreement of the rules and a
classifier (`memopt.simlm.learned`), and the rules are frozen, changed only for a construction no amount of data
can teach, with a case of its own.
"""

from __future__ import annotations

import pytest

from memopt.simlm.directives import rule_stances

ON = [
    # demonstrations: the output shows the directive's behaviour on the input
    ("extract", "resolve_dates", "Example (session date 2024-02-10). Input: 'We met last Monday.' "
                                 "Output: 'Met on 5 February 2024.'"),
    ("summarize", "resolve_dates", "Input: \"the exam is tomorrow\" (dated 3 May 2022) -> "
                                   "Summary: \"exam on 4 May 2022\""),
    ("extract", "all_participants", "Input: 'Ana: I teach chemistry. Ben: I play the cello.' "
                                    "Output: ['Ana teaches chemistry', 'Ben plays the cello']"),
    ("extract", "keep_details", "Good: 'Adopted a beagle named Rufus in March 2021.' Bad: 'Got a dog.'"),
    ("summarize", "keep_details", "Bad summary: 'She travelled.' "
                                  "Good summary: 'She flew to Osaka on 4 June with Kenji.'"),
    ("answer", "combine_all", "Context: [1] Ana swims. [2] Ana climbs. Question: Which sports does Ana do? "
                              "Answer: swimming and climbing."),
    ("answer", "abstain", "Context: [1] Ben likes tea. Question: Where does Ben work? Answer: Not mentioned."),
    ("rewrite_query", "expand_query", "Question: 'Where did Ana travel?' Query: 'Ana travel trip vacation holiday "
                                      "visit abroad'"),
    ("update", "delete_only_explicit", "Memories: ['Owns a cat', 'Owns a dog']. New fact: 'Gave the cat away'. "
                                       "Result: DELETE 'Owns a cat' only."),
    # preferences and value judgements
    ("summarize", "keep_details", "It is preferable to write a long fact with its names than a short "
                                  "one without them."),
    ("extract", "keep_details", "A memory stripped of its dates and places is worthless."),
    ("summarize", "keep_details", "Lean toward longer summaries: better an extra name than a missing one."),
    ("answer", "abstain", "Saying that the memories do not cover it beats inventing an answer."),
    # persona and goal
    ("extract", "keep_details", "You are a careful archivist who never loses a name or a number."),
    ("extract", "all_participants", "Persona: a chronicler who forgets nothing that any speaker says about "
                                    "themselves."),
    ("update", "delete_only_explicit", "Objective: leave the store untouched apart from the exact memories a user "
                                       "explicitly retracts."),
    # FAQ answers
    ("update", "delete_only_explicit", "Q: Should related memories go as well? A: No. Only the retracted one is "
                                       "removed."),
    ("answer", "abstain", "Q: What if none of the memories fits? A: Reply that it is not in memory."),
    # XML-tagged rules: the tag is markup, not a word of the rule
    ("update", "delete_only_explicit", "<deletion>Erase just the memory the user withdraws. Other memories "
                                       "stay.</deletion>"),
    ("extract", "resolve_dates", "<rule id=\"2\">Rewrite relative dates as calendar dates.</rule>"),
    # a negated consequence: "not so short that ..."
    ("summarize", "keep_details", "Never cut a summary so much that it loses the places people visited."),
    # domain synonyms
    ("update", "update_on_contradiction", "Invalidate an old memory only when the new one conflicts with it."),
    ("update", "delete_only_explicit", "Retire just the record that the user revokes; neighbouring records must be "
                                       "retained."),
    ("update", "delete_only_explicit", "Expire only the entry the retraction points to."),
    ("update", "delete_only_explicit", "Abstain from deleting memories the new fact does not explicitly name."),
    ("answer", "combine_all", "Multi-hop questions need evidence from several memories; link them to get the answer."),
]

NONE = [
    # (plans, proposals, counterfactuals, wishes and data descriptions: tests/simlm/test_mood.py)
    # work already done elsewhere
    # refusals that are not about missing information, and data descriptions
    ("answer", "Decline to answer questions about a person's bank details."),
    ("answer", "Refuse any request for passwords or medical records."),
    # demonstrations that show a format, or the behaviour without the directive
    ("extract", "Input: 'hello there' Output: {\"facts\": []}"),
    ("extract", "Input: 'I went hiking yesterday.' Output: 'Went hiking yesterday.'"),
    ("answer", "Context: [1] Mel paints. [2] Mel camps. Question: What does Mel do? Answer: painting."),
    ("answer", "Example output: {\"answer\": \"Paris\"}"),
    ("rewrite_query", "Question: 'Where did Ana travel?' Query: 'Where did Ana travel?'"),
]


@pytest.mark.parametrize(("op", "directive", "text"), ON)
def test_a_family_member_turns_its_directive_on(op: str, directive: str, text: str):
    stances = rule_stances(op, text)
    assert stances.get(directive, 0) > 0, stances
    assert not [k for k, v in stances.items() if v > 0 and k != directive], stances


@pytest.mark.parametrize(("op", "text"), NONE)
def test_a_sentence_that_instructs_nothing_turns_nothing_on(op: str, text: str):
    assert not [k for k, v in rule_stances(op, text).items() if v > 0]
