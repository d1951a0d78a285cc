"""Each directive of SimLM's catalogue: the failure without it, the fix with it, through real DSPy.

Every test runs a real `dspy.Predict` on a standard signature against SimLM, once with a seed
instruction that lacks the directive and once per phrasing of the directive appended to it, and
checks the documented failure and behaviour.
"""

from __future__ import annotations

import json

import dspy
import pytest

from memopt.lm import signatures as S
from memopt.simlm.directives import CATALOGUE, IRRELEVANT, active_directives, directives_for

SESSION = "1:56 pm on 8 May, 2023"
CONVERSATION = "\n".join([
    "Alex: Guess what, I adopted a puppy yesterday, his name is Max and he is a golden retriever.",
    "Bea: That's amazing! I started a pottery class last week at the Clay Studio.",
    "Alex: I moved to Denver this month, the new apartment is tiny but cozy.",
])
DIRECTIVES = {d.id: d for d in CATALOGUE}


def _run(lm, signature, instruction: str, adapter=None, **inputs):
    with dspy.context(lm=lm, adapter=adapter or dspy.ChatAdapter()):
        return dspy.Predict(signature.with_instructions(instruction))(**inputs)


def _phrasings(directive_id: str):
    return pytest.mark.parametrize("phrasing", DIRECTIVES[directive_id].phrasings)


@_phrasings("resolve_dates")
def test_resolve_dates_on_extract(sim_lm, phrasing):
    seed = "Extract the facts worth remembering about the user."
    without = _run(sim_lm, S.ExtractFacts, seed, session_date=SESSION, conversation=CONVERSATION).facts
    assert any("yesterday" in f for f in without) and not any("7 May 2023" in f for f in without)
    fixed = _run(sim_lm, S.ExtractFacts, f"{seed} {phrasing}", session_date=SESSION, conversation=CONVERSATION).facts
    assert any("7 May 2023" in f for f in fixed) and not any("yesterday" in f for f in fixed)


@_phrasings("all_participants")
def test_all_participants(sim_lm, phrasing):
    seed = "Extract the facts worth remembering about the user."
    without = _run(sim_lm, S.ExtractFacts, seed, session_date=SESSION, conversation=CONVERSATION).facts
    assert without and all(f.startswith("Alex") for f in without)
    fixed = _run(sim_lm, S.ExtractFacts, f"{seed} {phrasing}", session_date=SESSION, conversation=CONVERSATION).facts
    assert any(f.startswith("Bea") and "pottery" in f for f in fixed)


@_phrasings("keep_details")
def test_keep_details(sim_lm, phrasing):
    seed = "Extract the facts worth remembering about the user."
    without = _run(sim_lm, S.ExtractFacts, seed, session_date=SESSION, conversation=CONVERSATION).facts
    assert not any("Max" in f for f in without)
    fixed = _run(sim_lm, S.ExtractFacts, f"{seed} {phrasing}", session_date=SESSION, conversation=CONVERSATION).facts
    assert any("Max" in f and "golden retriever" in f for f in fixed)


def _decide(lm, instruction: str, memories: list[str], facts: list[str]) -> list[S.MemoryEvent]:
    existing = json.dumps([{"id": str(i), "text": t} for i, t in enumerate(memories)])
    return _run(lm, S.DecideMemoryUpdates, instruction, existing_memories=existing, new_facts=facts).memory


UPDATE_SEED = "Decide for each new fact whether to ADD, UPDATE, DELETE or make no change (NONE)."


@_phrasings("update_on_contradiction")
def test_update_on_contradiction(sim_lm, phrasing):
    memories = ["Alex adopted a puppy named Max", "Alex lives in Denver"]
    compatible = ["Alex adopted a kitten named Luna"]
    without = {e.id: e for e in _decide(sim_lm, UPDATE_SEED, memories, compatible)}
    assert without["0"].event == "UPDATE" and "Luna" in without["0"].text  # Max is overwritten
    fixed = _decide(sim_lm, f"{UPDATE_SEED} {phrasing}", memories, compatible)
    assert {e.id: e.event for e in fixed}["0"] == "NONE"
    assert any(e.event == "ADD" and "Luna" in e.text for e in fixed)
    contradiction = {e.id: e for e in _decide(sim_lm, f"{UPDATE_SEED} {phrasing}", memories,
                                               ["Alex moved from Denver to Seattle"])}
    assert contradiction["1"].event == "UPDATE" and contradiction["1"].old_memory == "Alex lives in Denver"


@_phrasings("delete_only_explicit")
def test_delete_only_explicit(sim_lm, phrasing):
    memories = ["Bea plays tennis every Monday with her sister Rosa", "Bea plays chess online", "Bea works at Orbitly"]
    retraction = ["Bea no longer plays tennis"]
    without = {e.id: e.event for e in _decide(sim_lm, UPDATE_SEED, memories, retraction)}
    assert without["0"] == "DELETE" and without["1"] == "DELETE"  # chess goes too
    fixed = {e.id: e.event for e in _decide(sim_lm, f"{UPDATE_SEED} {phrasing}", memories, retraction)}
    assert fixed["0"] == "DELETE" and fixed["1"] == "NONE" and fixed["2"] == "NONE"


@_phrasings("expand_query")
def test_expand_query(sim_lm, phrasing):
    seed = "Rewrite the question as a search query."
    question = "What is the name of Alex's pet?"
    assert _run(sim_lm, S.RewriteQuery, seed, question=question).query == question
    query = _run(sim_lm, S.RewriteQuery, f"{seed} {phrasing}", question=question).query
    assert "Alex" in query and "puppy" in query.split() and "What" not in query


CONTEXT = "\n".join([
    "[8 May 2023] Alex adopted a puppy named Max",
    "[20 June 2023] Alex adopted a kitten named Luna",
    "[9 June 2023] Bea works at Orbitly",
])
ANSWER_SEED = "Answer the question from the context."


@_phrasings("combine_all")
def test_combine_all(sim_lm, phrasing):
    question = "What are the names of Alex's pets?"
    assert _run(sim_lm, S.AnswerQuestion, ANSWER_SEED, question=question, context=CONTEXT).answer == "Max"
    combined = _run(sim_lm, S.AnswerQuestion, f"{ANSWER_SEED} {phrasing}", question=question, context=CONTEXT).answer
    assert combined == "Max, Luna"


@_phrasings("abstain")
def test_abstain(sim_lm, phrasing):
    question = "What is the name of Bea's dog?"
    guessed = _run(sim_lm, S.AnswerQuestion, ANSWER_SEED, question=question, context=CONTEXT).answer
    assert guessed != "Not mentioned"
    instruction = f"{ANSWER_SEED} {phrasing}"
    assert _run(sim_lm, S.AnswerQuestion, instruction, question=question, context=CONTEXT).answer == "Not mentioned"
    answerable = _run(sim_lm, S.AnswerQuestion, instruction, question="What is the name of Alex's puppy?",
                      context=CONTEXT).answer
    assert answerable == "Max"


@_phrasings("resolve_dates")
def test_resolve_dates_on_answer(sim_lm, phrasing):
    context = "[8 May 2023] Alex: I adopted a puppy yesterday."
    question = "When did Alex adopt the puppy?"
    assert _run(sim_lm, S.AnswerQuestion, ANSWER_SEED, question=question, context=context).answer == "yesterday"
    fixed = _run(sim_lm, S.AnswerQuestion, f"{ANSWER_SEED} {phrasing}", question=question, context=context).answer
    assert fixed == "7 May 2023"


def test_every_phrasing_triggers_only_its_directive():
    for directive in CATALOGUE:
        for op in directive.operations:
            for phrasing in directive.phrasings:
                assert active_directives(op, phrasing) == frozenset({directive.id}), (directive.id, op, phrasing)


def test_irrelevant_sentences_trigger_nothing():
    for sentence in IRRELEVANT:
        for op in {op for d in CATALOGUE for op in d.operations}:
            assert active_directives(op, sentence) == frozenset(), (op, sentence)


def test_catalogue_has_the_eight_required_directives():
    ids = {d.id for d in CATALOGUE}
    assert {"resolve_dates", "all_participants", "keep_details", "update_on_contradiction",
            "delete_only_explicit", "expand_query", "combine_all", "abstain"} <= ids
    assert {d.id for d in directives_for("extract")} == {"resolve_dates", "all_participants", "keep_details"}


def test_chat_and_json_adapters_agree(sim_lm):
    instruction = "Extract facts about every participant. " + DIRECTIVES["resolve_dates"].phrasings[0]
    chat = _run(sim_lm, S.ExtractFacts, instruction, session_date=SESSION, conversation=CONVERSATION).facts
    as_json = _run(sim_lm, S.ExtractFacts, instruction, adapter=dspy.JSONAdapter(), session_date=SESSION,
                   conversation=CONVERSATION).facts
    assert chat == as_json and len(chat) >= 3
    events_chat = _decide(sim_lm, UPDATE_SEED, ["Alex adopted a puppy named Max"], ["Alex adopted a kitten named Luna"])
    with dspy.context(lm=sim_lm, adapter=dspy.JSONAdapter()):
        events_json = dspy.Predict(S.DecideMemoryUpdates.with_instructions(UPDATE_SEED))(
            existing_memories=json.dumps([{"id": "0", "text": "Alex adopted a puppy named Max"}]),
            new_facts=["Alex adopted a kitten named Luna"],
        ).memory
    assert events_chat == events_json
