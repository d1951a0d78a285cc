"""Classes of wording that recur across authors (issue 21, the reader's seventh pass), each case worded here.

The sixth and seventh corpora's misses fell into classes, each handled by one general mechanism rather than a
sentence at a time; the cases below are new sentences of the same classes (none is a corpus sentence), and each
fails when its mechanism is removed:

- configuration values as instructions: JSON / YAML / TOML keys and values read as words, a false boolean negating
  its key (`memopt.simlm.config_values`);
- negative quantifier objects: "abbreviate nothing", "drop none of the numbers", "omit no place" negate their verb
  (a light verb's "no" names the act: "make no change" stays the operation that does nothing);
- contrast scope: "rather than X, Y", "Y instead of X", "prefer Y over X", "don't just X; Y" oppose X's act only: a
  topic named in X is still Y's topic ("don't just forward the question; enrich it"), the object of a contrasted
  gerund that Y refers back to is shared ("instead of dismissing the other participant, store their facts"), and a
  preference between two acts is not a preference for updating;
- parties named by role: two people by their role ("the coach and the athlete", "the buyer's ... as well as the
  seller's"), a quantified role ("every caller", "all the attendees") or two people who each say something, with what
  they say or a verb of recording, ask for every speaker's facts (a role alone, or "X or Y" mentioned in passing, does
  not);
- conditions taken up by the main clause: "when the guest talks about her work, keep those facts as well" names what
  to keep (an anaphor and an additive), it does not describe a situation;
- questions as instructions: a polite or checking question asks for what it names ("Could you ...?", "Have you
  ...?"), "why not X?" suggests X, "make sure nothing X says is dropped" is a prohibition, and "if not, restore the
  missing names" restores;
- another component's work: a passive whose agent is a component ("added by the search backend's analyser"), "X belongs
  to the ingestion step", a clause whose subject is another component ("an upstream parser keeps ...") refuse X;
- descriptions of the input: "the transcripts contain names", "messages frequently cite numbers" instruct nothing;
- few-shot demonstrations in more layouts (`memopt.simlm.demonstrations`): "Q:" / "A:" labels (an "A:" only after a
  "Q:"), "Fact to store:", a quoted 'yesterday', "Good memory:" / "Bad memory:", and old / new pairs whose decisions
  ADD a compatible fact and UPDATE only on a change;
- lexicons widened by meaning group: other tenses and places of "not mentioned" ("it was never mentioned", "it isn't
  in the documents"), associated / neighbouring words, amending and revising, putting details back, reflecting,
  bringing in and checking items, "that <noun> memory";
- shorthand: "+" and "&" join like "and" ("same person + activity" names one memory), "the named target" is the one
  memory a retraction names, "rel." / "abs." / "w/" / "w/o" are words; a prompt quoted after its label ("system:
  '...'") is the instructions, not an example.

Since issue 47 these cases test the rules alone (`rule_stances`): SimLM reads with the agreement of the rules and a
classifier (`memopt.simlm.learned`), and the rules are frozen, changed only for a construction no amount of data
can teach, with a case of its own.
"""

from __future__ import annotations

import pytest

from memopt.simlm.config_values import config_as_text, key_words
from memopt.simlm.directives import rule_stances

CONFIG_ON = [
    ("extract", "keep_details", '{"shorten_facts": false}'),
    ("summarize", "keep_details", "abbreviate_facts: false"),
    ("answer", "abstain", '{"makeUpAnswers": false, "tone": "friendly"}'),
    ("update", "update_on_contradiction", 'overwrite_mode = "contradiction-only"'),
    ("rewrite_query", "expand_query", '{"add_synonyms": true}'),
    ("answer", "combine_all", '{\n  "merge_memories": true,\n  "max_words": 40\n}'),
    ("update", "delete_only_explicit", '{"deletion": {"remove_related_memories": false}}'),
    ("extract", "resolve_dates", "convert_relative_dates: true"),
    ("extract", "all_participants", '{"speaker_filter": "everyParticipant"}'),
    # an elliptic "every relevant" names the items it combines
    ("answer", "combine_all", '{"answer_mode": "synthesise_every_relevant", "top_passage_only": false}'),
]

CONFIG_AGAINST = [
    ("extract", "resolve_dates", '{"resolve_dates": false}'),
    ("answer", "abstain", '{"guess_when_unsure": true}'),
    ("summarize", "resolve_dates", "keep-relative-dates: yes"),
]

CONFIG_INERT = [
    ("answer", 'Reply with {"answer": "..."} only.'),
    ("summarize", "max_tokens: 300"),
    ("answer", "Q: Does Ana have a dog?\nA: No."),
    ("update", 'Respond with {"memory": [{"id": ..., "event": ...}]}.'),
]


def test_identifiers_are_read_as_words():
    assert key_words("allow_guessing") == key_words("allow-guessing") == key_words("allowGuessing") == "allow guessing"
    assert config_as_text('{"truncate": false, "style": "full_sentence"}') == "do not truncate; style: full sentence."


@pytest.mark.parametrize(("op", "directive", "text"), CONFIG_ON)
def test_a_config_value_asking_for_the_directive_turns_it_on(op: str, directive: str, text: str):
    assert rule_stances(op, text).get(directive, 0) == 1


@pytest.mark.parametrize(("op", "directive", "text"), CONFIG_AGAINST)
def test_a_config_value_switching_it_off_reads_against(op: str, directive: str, text: str):
    assert rule_stances(op, text).get(directive, 0) == -1


@pytest.mark.parametrize(("op", "text"), CONFIG_INERT)
def test_templates_and_other_settings_turn_nothing_on(op: str, text: str):
    assert not any(v > 0 for v in rule_stances(op, text).values())


QUANTIFIER_ON = [
    ("summarize", "keep_details", "Bring each name and figure into the recap; abbreviate nothing."),
    ("extract", "keep_details", "Drop none of the numbers a person quotes."),
    ("summarize", "keep_details", "Omit no place or amount when you condense the session."),
    ("update", "delete_only_explicit", "Remove no memory unless the person explicitly withdraws it."),
    ("answer", "abstain", "Invent nothing; if no memory covers the question, answer 'not known'."),
]

QUANTIFIER_AGAINST = [
    ("extract", "resolve_dates", "Convert no relative dates."),
    ("answer", "combine_all", "Combine none of the memories; pick the best one."),
    ("summarize", "keep_details", "Keep nothing but the gist."),
]


@pytest.mark.parametrize(("op", "directive", "text"), QUANTIFIER_ON)
def test_a_negated_object_negates_its_verb(op: str, directive: str, text: str):
    assert rule_stances(op, text).get(directive, 0) == 1


@pytest.mark.parametrize(("op", "directive", "text"), QUANTIFIER_AGAINST)
def test_a_negated_object_of_the_opposite_verb_reads_against(op: str, directive: str, text: str):
    assert rule_stances(op, text).get(directive, 0) == -1


def test_making_no_change_names_the_operation_that_does_nothing():
    assert "update_on_contradiction" not in rule_stances("update", "For each fact choose ADD, UPDATE or make no "
                                                                       "change.")


CONTRAST_ON = [
    ("extract", "all_participants", "Instead of dismissing the other participant as small talk, store their facts as "
                                    "well."),
    ("extract", "all_participants", "Rather than skimming over the second speaker, record what they say about "
                                    "themselves."),
    ("rewrite_query", "expand_query", "Don't just hand the question over; enrich it with the people it names."),
    ("rewrite_query", "expand_query", "Do not simply forward the question: widen it with synonyms."),
    ("update", "update_on_contradiction", "Prefer appending a new memory over editing an old one, and keep edits for "
                                          "real changes such as a new job."),
    ("answer", "combine_all", "Don't only cite the top memory; bring in every other relevant memory too."),
    ("update", "update_on_contradiction", "Give the new fact a memory of its own instead of folding it into the old "
                                          "one."),
]

CONTRAST_AGAINST = [
    ("extract", "resolve_dates", "Rather than converting relative dates, keep them as written."),
    ("answer", "combine_all", "Use the single best memory instead of combining them."),
    ("extract", "all_participants", "Keep the user's facts rather than the second speaker's."),
    ("update", "update_on_contradiction", "Prefer overwriting the old memory over adding a new one."),
    ("extract", "all_participants", "Rather than recording the other speaker's facts, ignore them."),
]

CONTRAST_NOT_ON = [
    ("update", "Rather than removing only the withdrawn memory, clear out its neighbours as well."),
]


@pytest.mark.parametrize(("op", "directive", "text"), CONTRAST_ON)
def test_a_contrast_opposes_the_act_not_the_topic(op: str, directive: str, text: str):
    assert rule_stances(op, text).get(directive, 0) == 1


@pytest.mark.parametrize(("op", "directive", "text"), CONTRAST_AGAINST)
def test_a_contrast_against_the_directive_reads_against(op: str, directive: str, text: str):
    assert rule_stances(op, text).get(directive, 0) == -1


@pytest.mark.parametrize(("op", "text"), CONTRAST_NOT_ON)
def test_a_contrasted_restriction_stays_contrasted(op: str, text: str):
    assert not any(v > 0 for v in rule_stances(op, text).values())


SHORTHAND_ON = [
    ("update", "delete_only_explicit", "DELETE: the named target only (same person + activity)."),
    ("update", "delete_only_explicit", "When a hobby is given up, erase exactly one memory: same person + same "
                                       "activity."),
]


@pytest.mark.parametrize(("op", "directive", "text"), SHORTHAND_ON)
def test_shorthand_reads_as_words(op: str, directive: str, text: str):
    assert rule_stances(op, text).get(directive, 0) == 1


def test_a_shared_person_alone_is_still_a_topic():
    assert rule_stances("update", "Delete memories on the same person.").get("delete_only_explicit") == -1


ROLES_ON = [
    ("extract", "all_participants", "Capture what the coach and the athlete each tell you about themselves."),
    ("extract", "all_participants", "Store the facts every caller shares about their own life."),
    ("extract", "all_participants", "Record the buyer's stated budget as well as the seller's, each under its "
                                    "owner's name."),
    ("extract", "all_participants", "Keep the facts of the therapist and the client alike."),
    ("extract", "all_participants", "Note what all the attendees say about their own plans."),
]

ROLES_NOT_ON = [
    ("extract", "Greet the customer and the agent by name."),
    ("extract", "Friends or coworkers mentioned in passing need no facts of their own."),
    ("extract", "Pin each relative date to the session date."),
]


@pytest.mark.parametrize(("op", "directive", "text"), ROLES_ON)
def test_parties_named_by_role_are_every_speaker(op: str, directive: str, text: str):
    assert rule_stances(op, text).get(directive, 0) == 1


@pytest.mark.parametrize(("op", "text"), ROLES_NOT_ON)
def test_a_role_without_a_second_party_or_what_they_say_turns_nothing_on(op: str, text: str):
    assert not any(v > 0 for v in rule_stances(op, text).values())


def test_ignoring_two_roles_and_keeping_the_user_reads_against():
    text = "Ignore whatever the host and the guest say about the weather; extract only the user's facts."
    assert rule_stances("extract", text).get("all_participants") == -1


CONDITION_ON = [
    ("extract", "all_participants", "When the other participant talks about her own work, keep those facts as well, "
                                    "under her name."),
    ("extract", "all_participants", "If the second speaker reveals a hobby or a plan, record it too."),
]

CONDITION_NOT_ON = [
    ("answer", "If several memories mention it, the reply names the newest one."),
    ("extract", "When the second speaker mentions the weather, move on."),
]

QUESTION_ON = [
    ("extract", "all_participants", "Why not store the other participant's facts too?"),
    ("extract", "all_participants", "Can you make sure nothing the second speaker says is dropped?"),
    ("summarize", "keep_details", "Would a reader know who, where and how much from your summary alone? If not, "
                                  "restore the missing names and figures."),
    ("answer", "combine_all", "Have you looked at every relevant memory before answering?"),
    ("rewrite_query", "expand_query", "Could you add near synonyms of the key nouns to the query?"),
    ("answer", "abstain", "Is there any memory on this topic? If there is none, reply that it was not mentioned."),
]


@pytest.mark.parametrize(("op", "directive", "text"), CONDITION_ON)
def test_a_condition_taken_up_by_the_main_clause_names_its_object(op: str, directive: str, text: str):
    assert rule_stances(op, text).get(directive, 0) == 1


def test_a_taken_up_condition_lends_its_people_not_its_verb():
    text = "If the second speaker mentions her own job, note that as well and prefix it with her name."
    assert rule_stances("extract", text) == {"all_participants": 1}


@pytest.mark.parametrize(("op", "text"), CONDITION_NOT_ON)
def test_a_condition_describing_a_situation_turns_nothing_on(op: str, text: str):
    assert not any(v > 0 for v in rule_stances(op, text).values())


@pytest.mark.parametrize(("op", "directive", "text"), QUESTION_ON)
def test_a_question_asks_for_what_it_names(op: str, directive: str, text: str):
    assert rule_stances(op, text).get(directive, 0) == 1


def test_a_question_against_the_directive_reads_against():
    assert rule_stances("extract", "Could you leave relative dates like 'yesterday' as they are?").get(
        "resolve_dates") == -1


NOT_OURS = [
    ("extract", "Customer messages frequently cite order numbers and street names."),
]

STILL_OURS = [
    ("summarize", "keep_details", "The summary must include every name, date and price."),
    ("summarize", "keep_details", "Keep every number the transcripts contain."),
    ("extract", "resolve_dates", "Relative dates are resolved by you, against the session date."),
]


@pytest.mark.parametrize(("op", "text"), NOT_OURS)
def test_another_components_work_and_the_inputs_description_turn_nothing_on(op: str, text: str):
    assert not any(v > 0 for v in rule_stances(op, text).values())


@pytest.mark.parametrize(("op", "directive", "text"), STILL_OURS)
def test_the_readers_own_work_still_turns_it_on(op: str, directive: str, text: str):
    assert rule_stances(op, text).get(directive, 0) == 1


DEMONSTRATED = [
    ("answer", "abstain", "Context: 'Ivy keeps bees.'\nQ: Where does Ivy work?\nA: Not known."),
    ("answer", "combine_all", "Context: [1] 'Ivy keeps bees.' [2] 'Ivy grows tomatoes.'\nQ: What does Ivy look after?\n"
                              "A: Bees and tomatoes."),
    ("rewrite_query", "expand_query", "Q: Where did Omar go skiing?\nQuery: Omar skiing ski trip resort mountain snow"),
    ("extract", "resolve_dates", "Example, chat held on 3 June 2024, user: 'we moved house last Friday'\n"
                                 "Fact to store: 'Moved house on 31 May 2024'."),
    ("update", "update_on_contradiction", "Old: 'Plays tennis.' New: 'Plays golf.' -> ADD\n"
                                          "Old: 'Lives in Leeds.' New: 'Now lives in York.' -> UPDATE"),
    ("summarize", "keep_details", "Good memory: 'Raj paid 40 pounds for two tickets to Hamlet in Bristol.' "
                                  "Bad memory: 'Raj bought tickets.'"),
]

NOT_DEMONSTRATED = [
    ("update", "Old: 'Plays tennis.' New: 'Plays golf.' -> UPDATE"),
    ("answer", "A: I don't know, maybe later.\nB: Sure, no rush."),
    ("extract", "user: 'I saw her yesterday' -> fact: 'Saw her yesterday'"),
]


@pytest.mark.parametrize(("op", "directive", "text"), DEMONSTRATED)
def test_a_demonstration_in_another_layout_shows_the_directive(op: str, directive: str, text: str):
    assert rule_stances(op, text).get(directive, 0) == 1


@pytest.mark.parametrize(("op", "text"), NOT_DEMONSTRATED)
def test_a_demonstration_of_the_failure_or_a_dialogue_shows_nothing(op: str, text: str):
    assert not any(v > 0 for v in rule_stances(op, text).values())


LEXICON_ON = [
    ("answer", "abstain", "If nothing covers it, say that it was never mentioned."),
    ("answer", "abstain", "When the memories are silent, tell the user it isn't in the documents."),
    ("rewrite_query", "expand_query", "Search for the topic together with neighbouring words a person might use."),
    ("update", "delete_only_explicit", "Erase that hobby memory only."),
    ("update", "update_on_contradiction", "Amend a stored memory only when the new fact contradicts it."),
    ("summarize", "keep_details", "If any are missing, put the names, dates and amounts back."),
    ("answer", "combine_all", "Check every relevant memory before you answer."),
    ("answer", "combine_all", "Each pertinent memory should be reflected in the reply."),
]


@pytest.mark.parametrize(("op", "directive", "text"), LEXICON_ON)
def test_wider_lexicons_read_other_words_for_the_same_meaning(op: str, directive: str, text: str):
    assert rule_stances(op, text).get(directive, 0) == 1


UNWRAPPED_ON = [
    ("answer", "abstain", "system: 'When the memories lack the answer, reply \"We don't have that on file.\"'"),
    ("answer", "combine_all", 'prompt = "Merge every relevant memory into the answer."'),
    ("summarize", "resolve_dates", "summary: rel. dates -> abs. dates"),
]


@pytest.mark.parametrize(("op", "directive", "text"), UNWRAPPED_ON)
def test_a_quoted_prompt_and_abbreviations_are_read(op: str, directive: str, text: str):
    assert rule_stances(op, text).get(directive, 0) == 1


def test_a_quoted_turn_is_still_an_example():
    assert rule_stances("answer", "user: 'I have no record of that.'") == {}
