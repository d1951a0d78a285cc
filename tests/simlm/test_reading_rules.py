"""Constructions of English the reader handles since the fresh corpus became tuning material (issue 21).

Each case is worded here, not taken from a corpus. The reader before these rules (main at 966ff2c) reads 35 of the
43 wrongly; of the other eight, six are guards (a rule must not over-reach) and two ("make no change", "if the
answer is unknown") fail when their own rule is removed, as does at least one case of every rule.

Since issue 47 these cases test the rules alone (`rule_stances`): SimLM reads with the agreement of the rules and a
classifier (`memopt.simlm.learned`), and the rules are frozen, changed only for a construction no amount of data
can teach, with a case of its own.
"""

from __future__ import annotations

import pytest

from memopt.simlm.directives import rule_stances


@pytest.mark.parametrize(("sentence", "op", "stance"), [
    # a clause handing its subject to someone else, or keeping it for reading only, refuses the whole clause
    # "X is not enough / insufficient" asks for more than X
    ("Answering from the top memory alone is not enough.", "answer", {"combine_all": 1}),
    ("Using only the best match is insufficient.", "answer", {"combine_all": 1}),
    # "X tends to add noise / hurts" speaks against X
    ("Adding synonyms tends to add noise.", "rewrite_query", {"expand_query": -1}),
    ("Keyword expansion hurts precision here.", "rewrite_query", {"expand_query": -1}),
    # a concessive aside inside a prohibition's subject does not end it
    ("No number, however trivial, may be left out of a fact.", "extract", {"keep_details": 1}),
    # comparatives of equality restrict nothing
    ("Facts about the second speaker are just as valuable as facts about the user.", "extract",
     {"all_participants": 1}),
    # the other party, named in other ways
    ("Discard facts stated by anyone other than the user.", "extract", {"all_participants": -1}),
    ("Two people talk in each session; keep what either of them says about their plans.", "extract",
     {"all_participants": 1}),
    ("Store what the bot-side speaker reveals about itself.", "extract", {"all_participants": 1}),
    # everyone, with a covering or writing verb
    ("Make sure your notes include everybody who took part.", "extract", {"all_participants": 1}),
    # a fact criticised as too vague, or asked to be as specific as possible, asks for detail
    ("Facts such as 'went on a trip' are too generic.", "extract", {"keep_details": 1}),
    ("A memory should never be too vague.", "extract", {"keep_details": 1}),
    ("Write memories that are as detailed as possible.", "extract", {"keep_details": 1}),
    ("Record precise information about each event.", "extract", {"keep_details": 1}),
    ("Quote the amounts the user gives.", "extract", {"keep_details": 1}),
    # a preference of the user's is not a preference for updating
    ("Update the memory that holds the user's preferences.", "update", {}),
    # contradictions in other words; supplementary information is compatible; the old memory left as it is
    ("Modify a stored memory only if the new fact is at odds with it.", "update", {"update_on_contradiction": 1}),
    ("Overwrite an entry only when new evidence proves it was wrong.", "update", {"update_on_contradiction": 1}),
    ("A change of heart replaces the old memory.", "update", {"update_on_contradiction": 1}),
    ("Additional details about a stored fact go into a new memory.", "update", {"update_on_contradiction": 1}),
    ("Stored memories remain untouched unless the new fact contradicts them.", "update",
     {"update_on_contradiction": 1}),
    # adding rather than modifying
    ("If unsure, add a separate memory instead of updating the old one.", "update", {"update_on_contradiction": 1}),
    # "no change" names the operation that does nothing, it does not negate an update
    ("Either add the fact or make no change.", "update", {}),
    # topical similarity is a shared topic
    ("Do not remove memories for their similarity to a retracted fact.", "update", {"delete_only_explicit": 1}),
    # other wordings of the question
    ("Include different ways a user might phrase the same request.", "rewrite_query", {"expand_query": 1}),
    ("Add terms of the same meaning to the query.", "rewrite_query", {"expand_query": 1}),
    ("Add the words a matching memory would contain.", "rewrite_query", {"expand_query": 1}),
    # combining, in other words
    ("Facts from several memories should be drawn together into one answer.", "answer", {"combine_all": 1}),
    # saying it is not known, in other words
    ("Where the memories say nothing, the answer is 'unknown'.", "answer", {"abstain": 1}),
    ("When nothing fits, tell the user you do not have that information.", "answer", {"abstain": 1}),
    ("Where no memory applies, the assistant must so indicate.", "answer", {"abstain": 1}),
    ("Do not offer conjectures.", "answer", {"abstain": 1}),
    # a situation described in an "if" clause instructs nothing
    ("If the answer is unknown, search the memories again.", "answer", {}),
    # a quoted example under a negation outside its quotes
    ("Write 'on 3 May', never 'last Tuesday'.", "extract", {"resolve_dates": 1}),
    # guards: the rules above do not over-reach
    ("Relative time words are handled by converting them to calendar dates.", "extract", {"resolve_dates": 1}),
    ("Never write 'I guess'.", "answer", {}),
    ("The user changed their mind about the trip.", "update", {}),
    ("Sorting is handled by the database.", "extract", {}),
    ("If the question is covered by the memories, answer it, otherwise say 'Not mentioned'.", "answer", {"abstain": 1}),
    ("Dates are handled later, so convert relative dates to absolute ones now.", "extract", {"resolve_dates": 1}),
    ("If expansion is done by the retriever, keep the question as it is.", "rewrite_query", {"expand_query": -1}),
])
def test_constructions_since_the_fresh_corpus_read_the_right_way(sentence, op, stance):
    assert rule_stances(op, sentence) == stance


@pytest.mark.parametrize(("sentence", "op", "stance"), [
    # (the mood cases that stood here, hypotheticals, plans and reported speech, are in tests/simlm/test_mood.py)
    # a hedge between commas does not stop the negation before it
    ("Sharing a subject with a withdrawn fact is not, on its own, a reason to erase a memory.", "update",
     {"delete_only_explicit": 1}),
    # "X is not evidence / a reason": X is no ground to act on, and the act stays negated
    ("For deletions, a common theme is not evidence.", "update", {"delete_only_explicit": 1}),
    ("Overlapping subjects are not a reason to delete related memories.", "update", {"delete_only_explicit": 1}),
    # a shared topic denied as a ground speaks for deleting only what is retracted
    ("Before a delete: overlapping topics are not evidence.", "update", {"delete_only_explicit": 1}),
    # deferral: happening in another step, done inside another component, someone else's concern
    # a preference: "X is preferable to Y" puts Y in contrast
    ("A plain 'I don't know' is preferable to an invented answer.", "answer", {"abstain": 1}),
    # a verbless "nothing" before a participle negates it
    ("Record each name and number, nothing dropped.", "extract", {"keep_details": 1}),
    # refusing a request is not abstaining for want of information
    ("Decline requests for legal advice.", "answer", {}),
    # doubt with keeping: delete only what is certainly retracted
    ("If unsure whether a memory was retracted, keep it.", "update", {"delete_only_explicit": 1}),
    # lexicons by meaning group
    ("Never sacrifice a place name for a shorter fact.", "extract", {"keep_details": 1}),
    ("Summaries must not abstract away the numbers.", "summarize", {"keep_details": 1}),
    ("Do not overwrite a memory with a fact that simply elaborates on it.", "update", {"update_on_contradiction": 1}),
    ("Edit a memory only if a newer fact proves it false.", "update", {"update_on_contradiction": 1}),
    ("Add the new fact and keep the existing one.", "update", {"update_on_contradiction": 1}),
    ("A retraction invalidates only the memory it names.", "update", {"delete_only_explicit": 1}),
    ("Other memories about that person stay valid after a retraction.", "update", {"delete_only_explicit": 1}),
    ("Link together the memories that each hold part of the answer.", "answer", {"combine_all": 1}),
    ("The answer must reflect the entirety of the retrieved context.", "answer", {"combine_all": 1}),
    ("Report everything the memories say about the question.", "answer", {"combine_all": 1}),
    ("Answer from the runner-up memories as well as the best match.", "answer", {"combine_all": 1}),
    ("Capture preferences of all chat participants.", "extract", {"all_participants": 1}),
    ("Participants: extract from both of them.", "extract", {"all_participants": 1}),
    ("Reply that the answer isn't available when no memory covers it.", "answer", {"abstain": 1}),
    ("Questions without support should receive 'not found'.", "answer", {"abstain": 1}),
    ("Do not respond when no entry backs the question.", "answer", {"abstain": 1}),
    ("Never answer unless some retrieved memory about that exact person supports it.", "answer", {"abstain": 1}),
    ("Titles appear in bold in the transcript.", "extract", {}),
    ("When unsure, err on the side of updating the stored memory.", "update", {"update_on_contradiction": -1}),
    # guards: the rules above do not over-reach
    ("You may convert relative dates to calendar dates.", "extract", {"resolve_dates": 1}),
    ("Later messages may correct earlier ones; update a memory when the new fact contradicts it.", "update",
     {"update_on_contradiction": 1}),
    ("Say 'I don't know' when no memory fits.", "answer", {"abstain": 1}),
    ("It is preferable to list every relevant memory.", "answer", {"combine_all": 1}),
    ("Decline to answer when the memories are silent.", "answer", {"abstain": 1}),
    ("Every name must appear in the fact.", "extract", {"keep_details": 1}),
    ("Add the other words they might use for the same thing.", "rewrite_query", {"expand_query": 1}),
    ("Since these notes will be read much later, resolve every relative date now.", "extract", {"resolve_dates": 1}),
    ("Whatever the user asked, reply 'unknown' when no memory fits.", "answer", {"abstain": 1}),
])
def test_constructions_since_the_third_corpus_read_the_right_way(sentence, op, stance):
    assert rule_stances(op, sentence) == stance


@pytest.mark.parametrize("sentence, op", [
    # a predicate of harm that ends the sentence once crashed the reader (IndexError), on the thirteenth corpus
    ("Leave one name off a rope list and someone gets hurt.", "answer"),
    ("Someone gets hurt", "extract"),
    ("It is not acceptable for", "extract"),
])
def test_a_clause_ending_at_its_predicate_is_read_without_error(sentence, op):
    assert rule_stances(op, sentence) == {}


# From the styles corpus' test (issue 21), folded in here by issue 47.
@pytest.mark.parametrize(("sentence", "op", "stance"), [
    # passive and modal prohibitions: "No X is to be V-ed" negates the verb, across an aside in parentheses
    ("No specific detail (name, date, number or place) is to be dropped from a fact.", "extract", {"keep_details": 1}),
    ("Nothing that either participant says about themselves should be dropped.", "extract", {"all_participants": 1}),
    ("Information from the assistant is not to be stored.", "extract", {"all_participants": -1}),
    ("Related terms are not to be added to the query.", "rewrite_query", {"expand_query": -1}),
    # a negation inside a negation cancels it
    ("No relative time expression (e.g. 'yesterday') is to be kept in a fact without being converted.", "extract",
     {"resolve_dates": 1}),
    # "refrain from", "don't X unless Y"
    ("Refrain from guessing when the memories do not cover the question.", "answer", {"abstain": 1}),
    ("Do not give an answer unless the context supports it.", "answer", {"abstain": 1}),
    ("Don't overwrite a stored memory unless the two cannot both be true.", "update", {"update_on_contradiction": 1}),
    # "never more than X", "nothing beyond X" restrict to X
    ("Never delete more than the single memory that a retraction names.", "update", {"delete_only_explicit": 1}),
    ("Delete nothing beyond the memory that is retracted.", "update", {"delete_only_explicit": 1}),
    # comparatives and contrasts
    ("It is better to draw on several memories than to rely on the best match alone.", "answer", {"combine_all": 1}),
    ("When a new fact merely adds detail rather than contradicting the stored one, it should be added separately "
     "rather than merged.", "update", {"update_on_contradiction": 1}),
    ("Unanswerable questions are to be answered with 'Not mentioned'.", "answer", {"abstain": 1}),
    ("Store facts about the user as well as about the other speaker.", "extract", {"all_participants": 1}),
    ("Extract facts from both speakers, each one attributed to its speaker.", "extract", {"all_participants": 1}),
    ("Your answer should be the union of the relevant facts across all retrieved items.", "answer", {"combine_all": 1}),
    # what another component does, context-only messages, what is not required
    ("Facts about the other speaker are not your job; another component handles them.", "extract",
     {"all_participants": -1}),
    ("System messages are context only; don't extract facts from them.", "extract", {}),
    ("A contradiction is not required for an update.", "update", {"update_on_contradiction": -1}),
    ("The assistant should not disclose private information to third parties.", "extract", {}),
    ("Do not answer the user's question; just extract memories.", "extract", {"all_participants": -1}),
    # a condition ("unless only one ...") qualifies the instruction; its "only" restricts nothing
    ("Do not limit extraction to the user unless only one person is speaking.", "extract", {"all_participants": 1}),
    # a negation in a subject or relative clause ends at the main verb
    ("A fact that does not contradict a stored memory must be added as a new memory.", "update",
     {"update_on_contradiction": 1}),
    ("Questions the context cannot answer should be answered with 'I don't know'.", "answer", {"abstain": 1}),
    ("Facts not mentioned by the retraction stay unchanged.", "update", {"delete_only_explicit": 1}),
    # "under no circumstances may X, Y or Z be V-ed" negates the verb at the end, past the list's commas
    ("Under no circumstances may a name, number or place be left out of a fact.", "extract", {"keep_details": 1}),
    # "clearly" is explicitness, not a deletion
    ("Never delete a memory unless the user clearly takes it back.", "update", {"delete_only_explicit": 1}),
    # a match reaching past "over" / "than" is in the contrast
    ("Prefer short facts over detailed facts.", "extract", {"keep_details": -1}),
    ("Add a title for each summary.", "summarize", {}),
    ("Participants: both.", "extract", {"all_participants": 1}),
    ("No memory may be deleted just because it is on the same topic as a withdrawn fact.", "update",
     {"delete_only_explicit": 1}),
    ("When unsure, err on the side of more detail.", "extract", {"keep_details": 1}),
])
def test_constructions_of_the_styles_corpus_read_the_right_way(sentence, op, stance):
    assert rule_stances(op, sentence) == stance


# From the first corpus' test (issue 21), folded in here by issue 47.
def _on(op: str, text: str) -> set[str]:
    return {k for k, v in rule_stances(op, text).items() if v > 0}


@pytest.mark.parametrize(("sentence", "op", "stance"), [
    ("Do not resolve dates.", "extract", {"resolve_dates": -1}),
    ("Never leave a time reference relative.", "extract", {"resolve_dates": +1}),
    ("Rather than converting relative dates, quote them.", "summarize", {"resolve_dates": -1}),
    ("Extract facts about every speaker, not only the user.", "extract", {"all_participants": +1}),
    ("Only extract facts about the user.", "extract", {"all_participants": -1}),
    ("Answer from the single best match.", "answer", {"combine_all": -1}),
    ("No need to expand the query.", "rewrite_query", {"expand_query": -1}),
    ("Do not delete a memory unless it is explicitly retracted.", "update", {"delete_only_explicit": +1}),
    ("- **Never** guess.", "answer", {"abstain": +1}),
    ("Guessing is not allowed.", "answer", {"abstain": +1}),
    ("Don't forget to convert relative dates into calendar dates.", "extract", {"resolve_dates": +1}),
    ("Prefer ADD over UPDATE unless the facts conflict.", "update", {"update_on_contradiction": +1}),
    ("Prefer updating over adding.", "update", {"update_on_contradiction": -1}),
])
def test_negation_and_contrast_decide_the_stance(sentence, op, stance):
    assert rule_stances(op, sentence) == stance


def test_quoted_text_is_an_example_not_an_instruction():
    assert _on("answer", "When the memories say nothing, reply 'I don't know'.") == {"abstain"}
    assert _on("answer", 'If nothing supports an answer, say "I do not know".') == {"abstain"}
    with_examples = ("Convert relative dates into calendar dates, for example \"I didn't go last week\" becomes "
                     "\"I didn't go in the week before 9 June 2023\".")
    assert _on("extract", with_examples) == {"resolve_dates"}
    assert rule_stances("answer", "Never write 'I guess' in an answer.") == {}
