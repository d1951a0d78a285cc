"""Constructions of English the reader handles since the fresh corpus became tuning material (issue 21).

Each case is worded here, not taken from a corpus. The reader before these rules (main at 966ff2c) reads 35 of the
43 wrongly; of the other eight, six are guards (a rule must not over-reach) and two ("make no change", "if the
answer is unknown") fail when their own rule is removed, as does at least one case of every rule.
"""

from __future__ import annotations

import pytest

from memopt.simlm import directive_stances


@pytest.mark.parametrize(("sentence", "op", "stance"), [
    # a clause handing its subject to someone else, or keeping it for reading only, refuses the whole clause
    ("Resolving relative dates is handled by the scheduler.", "extract", {"resolve_dates": -1}),
    ("What the other speaker says is background only.", "extract", {"all_participants": -1}),
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
    assert directive_stances(op, sentence) == stance


@pytest.mark.parametrize(("sentence", "op", "stance"), [
    # a clause that imagines another setting instructs nothing: a pronoun subject with "would" / "might" / "could"
    ("In a calendar app you would convert relative dates; here they stay as spoken.", "extract", {"resolve_dates": -1}),
    ("Elsewhere one might pull every memory together into the answer.", "answer", {}),
    # a plan: a future marker with a modal of possibility
    ("Synonym lists may be appended to the query in a future release.", "rewrite_query", {}),
    ("Resolving relative dates could be switched on later.", "extract", {}),
    # a third party's quoted request is their speech, not the instruction's topic
    ('If the user requests "every detail of the itinerary", store the itinerary as one memory.', "extract", {}),
    # a hedge between commas does not stop the negation before it
    ("Sharing a subject with a withdrawn fact is not, on its own, a reason to erase a memory.", "update",
     {"delete_only_explicit": 1}),
    # "X is not evidence / a reason": X is no ground to act on, and the act stays negated
    ("For deletions, a common theme is not evidence.", "update", {"delete_only_explicit": 1}),
    ("Overlapping subjects are not a reason to delete related memories.", "update", {"delete_only_explicit": 1}),
    # a shared topic denied as a ground speaks for deleting only what is retracted
    ("Before a delete: overlapping topics are not evidence.", "update", {"delete_only_explicit": 1}),
    # deferral: happening in another step, done inside another component, someone else's concern
    ("Resolving relative dates happens downstream, so copy time words as spoken.", "extract", {"resolve_dates": -1}),
    ("Synonym expansion is performed inside the search engine.", "rewrite_query", {"expand_query": -1}),
    ("Whether dates are absolute is another team's responsibility.", "extract", {"resolve_dates": -1}),
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
    assert directive_stances(op, sentence) == stance


@pytest.mark.parametrize("sentence, op", [
    # a predicate of harm that ends the sentence once crashed the reader (IndexError), on the thirteenth corpus
    ("Leave one name off a rope list and someone gets hurt.", "answer"),
    ("Someone gets hurt", "extract"),
    ("It is not acceptable for", "extract"),
])
def test_a_clause_ending_at_its_predicate_is_read_without_error(sentence, op):
    assert directive_stances(op, sentence) == {}
