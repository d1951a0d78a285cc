"""SimLM's trade-offs: a directive's effect depends on the data, as its catalogue entry says (docs/simlm.md).

Each test gives the same directive two kinds of data and shows that it helps on one and hurts (or costs)
on the other, through SimLM's behaviour for the operation (the code a prompt's directives switch).
"""

from __future__ import annotations

import dspy

from memopt.judge.metrics import token_f1
from memopt.lm import signatures as S
from memopt.simlm import behaviour
from memopt.simlm.answering import NOT_MENTIONED, answer
from memopt.simlm.directives import CATALOGUE
from memopt.systems.store import MemoryStore

DIRECTIVES = {d.id: d for d in CATALOGUE}
ON = frozenset


def test_every_trade_off_is_documented():
    for directive in ("abstain", "combine_all", "expand_query", "keep_details"):
        assert DIRECTIVES[directive].trade_off, directive


def test_abstain_gains_on_unanswerable_questions_and_loses_paraphrased_evidence():
    context = "[8 May 2023] Alex adopted a puppy named Max\n[9 June 2023] Bea works at Orbitly"
    unanswerable = "What is the name of Bea's dog?"
    assert answer(unanswerable, context, ON()) != NOT_MENTIONED
    assert answer(unanswerable, context, ON({"abstain"})) == NOT_MENTIONED
    literal = "What is the name of the puppy Alex adopted?"
    assert answer(literal, context, ON()) == answer(literal, context, ON({"abstain"})) == "Max"
    paraphrased = "What is the name of Alex's pet?"  # the evidence says "puppy": a related word, not the question's
    assert answer(paraphrased, context, ON()) == "Max"
    assert answer(paraphrased, context, ON({"abstain"})) == NOT_MENTIONED


def test_combine_all_helps_list_questions_and_hurts_single_hop_ones():
    context = ("[8 May 2023] Alex adopted a puppy named Max at the shelter\n"
               "[20 June 2023] Alex adopted a kitten named Luna at the shelter")
    listing, single = "What are the names of Alex's pets?", "What is the name of the puppy Alex adopted at the shelter?"
    assert token_f1(answer(listing, context, ON()), "Max, Luna") < token_f1(
        answer(listing, context, ON({"combine_all"})), "Max, Luna") == 1.0
    assert answer(single, context, ON()) == "Max"
    assert answer(single, context, ON({"combine_all"})) == "Max, Luna"
    assert token_f1("Max, Luna", "Max") < 1.0


def _top(chunks: list[str], query: str, k: int) -> list[str]:
    store = MemoryStore()
    for text in chunks:
        store.add(text, session_date="8 May 2023")
    return [unit.text for unit, _ in store.search(query, k=k)]


def test_expand_query_brings_distractors_at_small_top_k_and_finds_paraphrased_evidence():
    def query(question: str, active: frozenset[str]) -> str:
        return behaviour.rewrite_query({"question": question}, active)["query"]

    literal_evidence = "Alex: my pet is a parrot called Rio"
    distractor = "Bea: we adopted a puppy and a kitten, our dog and cat get along"
    chunks = [literal_evidence, distractor, "Alex: I work at Orbitly now", "Bea: I moved to Denver"]
    question = "What pet does Alex have?"
    assert _top(chunks, query(question, ON()), 1) == [literal_evidence]
    expanded = query(question, ON({"expand_query"}))
    assert _top(chunks, expanded, 1) == [distractor]  # the related terms outrank the evidence at top_k 1
    assert literal_evidence in _top(chunks, expanded, 2)  # a larger top_k still holds it
    paraphrased = "Alex: I got a puppy last month, he chews everything"
    chunks = [paraphrased, "Alex: I work at Orbitly now", "Alex: I moved to Denver", "Bea: I like tea"]
    assert paraphrased not in _top(chunks, query(question, ON()), 1)
    assert _top(chunks, expanded, 1) == [paraphrased]


def test_keep_details_costs_reply_tokens_only_where_sentences_are_long(sim_lm):
    long_sentences = "Alex: I adopted a puppy yesterday, his name is Max and he is a golden retriever from Denver."
    short_sentences = "Alex: I adopted a puppy yesterday."
    seed = "Extract the facts worth remembering about the user."
    detailed = f"{seed} {DIRECTIVES['keep_details'].phrasings[0]}"

    def reply_tokens(instruction: str, conversation: str) -> int:
        before = len(sim_lm.history)
        with dspy.context(lm=sim_lm):
            dspy.Predict(S.ExtractFacts.with_instructions(instruction))(session_date="8 May 2023",
                                                                         conversation=conversation)
        return sum(entry["usage"]["completion_tokens"] for entry in sim_lm.history[before:])

    assert reply_tokens(detailed, long_sentences) > reply_tokens(seed, long_sentences)
    assert reply_tokens(detailed, short_sentences) == reply_tokens(seed, short_sentences)
