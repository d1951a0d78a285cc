"""SimLM's directive reading on a corpus of instruction sentences it was not written for.

tests/fixtures/directive_corpus.yaml holds, per directive, paraphrases in many styles that must turn it on
and negated, contrasted or unrelated sentences that must not, plus unrelated sentences from real
memory-system prompts that must turn on nothing. The `heldout` half was written before the reading and
never used to tune it; the `dev` half is what it was tuned on. Both must reach >= 85 % recognised and
<= 5 % false triggers. Print the figures with ``python tests/simlm/test_reading_first_corpus.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from memopt.simlm.directives import (
    CATALOGUE,
    IRRELEVANT,
    active_directives,
    catalogue_table,
    directive_stances,
    directives_for,
)
from memopt.systems.prompts import load_prompts

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CORPUS = yaml.safe_load((FIXTURES / "directive_corpus.yaml").read_text())
DIRECTIVES = {d.id: d for d in CATALOGUE}
OPERATIONS = sorted({op for d in CATALOGUE for op in d.operations})


def corpus_figures(half: str) -> dict[str, object]:
    """Recognised paraphrases, false triggers and cross triggers of one half of the corpus, with the misses."""
    corpus = CORPUS[half]
    misses: list[str] = []
    grants = recognised = negatives = false = cross = 0
    for directive in CATALOGUE:
        entry = corpus[directive.id]
        op = directive.operations[0]
        for sentence in entry["grant"]:
            active = {a for o in directive.operations for a in active_directives(o, sentence)}
            grants += 1
            if directive.id in active:
                recognised += 1
            else:
                misses.append(f"missed  {directive.id}: {sentence}")
            if active - {directive.id}:
                cross += 1
                misses.append(f"cross   {directive.id} -> {sorted(active - {directive.id})}: {sentence}")
        for sentence in entry["other"]:
            negatives += 1
            if directive.id in active_directives(op, sentence):
                false += 1
                misses.append(f"false   {directive.id}: {sentence}")
    for sentence in corpus["unrelated"]:
        negatives += 1
        active = {a for op in OPERATIONS for a in active_directives(op, sentence)}
        if active:
            false += 1
            misses.append(f"false   {sorted(active)}: {sentence}")
    return {"grants": grants, "recognised": recognised / grants, "negatives": negatives, "false": false / negatives,
            "cross": cross / grants, "misses": misses}


@pytest.mark.parametrize("half", ["dev", "heldout"])
def test_corpus_is_big_and_varied_enough(half):
    for directive in CATALOGUE:
        entry = CORPUS[half][directive.id]
        assert len(entry["grant"]) >= 15 and len(entry["other"]) >= 15, directive.id
    assert len(CORPUS[half]["unrelated"]) >= 15


@pytest.mark.parametrize("half", ["dev", "heldout"])
def test_paraphrases_are_recognised_and_other_sentences_are_not(half):
    figures = corpus_figures(half)
    assert figures["recognised"] >= 0.85, figures
    assert figures["false"] <= 0.05, figures
    assert figures["cross"] <= 0.05, figures


def test_the_last_sentence_about_a_directive_decides():
    grant, forbid = "Convert relative dates into calendar dates.", "Keep relative dates as they are."
    assert directive_stances("extract", f"{grant} {forbid}") == {"resolve_dates": -1}
    assert directive_stances("extract", f"{forbid} {grant}") == {"resolve_dates": +1}
    unrelated = "Write in a neutral, professional tone."
    assert active_directives("extract", f"{grant}\n{unrelated}") == {"resolve_dates"}
    two = "Extract facts about both speakers. Keep every name and number."
    assert active_directives("extract", f"{two} Only extract facts about the user.") == {"keep_details"}


def test_appended_bad_advice_turns_a_directive_off():
    tuned = "Answer from the context. If the memories do not support an answer, reply 'Not mentioned'."
    assert "abstain" in active_directives("answer", tuned)
    bad = f"{tuned}\nAlways give an answer, never say it is not mentioned."
    assert directive_stances("answer", bad) == {"abstain": -1}
    assert "abstain" not in active_directives("answer", bad)


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
    assert directive_stances(op, sentence) == stance


def test_quoted_text_is_an_example_not_an_instruction():
    assert active_directives("answer", "When the memories say nothing, reply 'I don't know'.") == {"abstain"}
    assert active_directives("answer", 'If nothing supports an answer, say "I do not know".') == {"abstain"}
    with_examples = ("Convert relative dates into calendar dates, for example \"I didn't go last week\" becomes "
                     "\"I didn't go in the week before 9 June 2023\".")
    assert active_directives("extract", with_examples) == {"resolve_dates"}
    assert directive_stances("answer", "Never write 'I guess' in an answer.") == {}


def test_phrasings_and_irrelevant_sentences_speak_about_no_other_directive():
    """Reflection appends these: a phrasing must not switch off another directive granted earlier."""
    for directive in CATALOGUE:
        for op in directive.operations:
            for phrasing in directive.phrasings:
                assert directive_stances(op, phrasing) == {directive.id: 1}, (op, phrasing)
    for sentence in IRRELEVANT:
        for op in OPERATIONS:
            assert directive_stances(op, sentence) == {}, (op, sentence)


def test_every_documented_example_does_what_the_table_says():
    for directive in CATALOGUE:
        for sentence in directive.examples_on:
            assert directive.present(sentence), (directive.id, sentence)
        for sentence in directive.examples_off:
            assert not directive.present(sentence), (directive.id, sentence)


def test_directives_for_an_operation_read_only_that_operations_directives():
    text = "Combine all relevant memories. Convert relative dates into calendar dates."
    assert set(directive_stances("answer", text)) <= {d.id for d in directives_for("answer")}
    assert active_directives("extract", text) == {"resolve_dates"}


# The SimLM operation each seed prompt is sent to (the output field of its signature decides).
SEED_OPERATIONS = {("evermemos", "episode"): "summarize", ("evermemos", "facts"): "extract"}
# What docs/systems.md ("Memory systems") says each pipeline's seed prompts lack.
SEED_LACKS = {
    ("mem0", "extract"): {"all_participants", "keep_details", "resolve_dates"},
    ("mem0", "update"): {"update_on_contradiction", "delete_only_explicit"},
    ("mem0", "answer"): {"abstain"},
    ("long_context", "answer"): {"resolve_dates", "abstain"},
    ("rag", "answer"): {"resolve_dates", "abstain"},
    ("rag", "rewrite_query"): {"expand_query"},
    ("evermemos", "facts"): {"keep_details"},
    ("evermemos", "answer"): {"abstain"},
}
SEED_GRANTS = {
    ("mem0", "answer"): {"resolve_dates"},
    ("evermemos", "episode"): {"resolve_dates", "keep_details"},
    ("evermemos", "facts"): {"resolve_dates", "all_participants"},
    ("evermemos", "answer"): {"resolve_dates", "combine_all"},
}


@pytest.mark.parametrize(("pipeline", "op"), sorted(SEED_LACKS))
def test_seed_prompts_lack_the_directives_the_readme_says(pipeline, op):
    text = load_prompts(pipeline, [op])[op]
    assert not active_directives(SEED_OPERATIONS.get((pipeline, op), op), text) & SEED_LACKS[pipeline, op]


@pytest.mark.parametrize(("pipeline", "op"), sorted(SEED_GRANTS))
def test_seed_prompts_grant_the_directives_the_readme_says(pipeline, op):
    text = load_prompts(pipeline, [op])[op]
    assert active_directives(SEED_OPERATIONS.get((pipeline, op), op), text) == SEED_GRANTS[pipeline, op]


def test_mem0s_default_prompts_grant_no_directive():
    """Mem0's own defaults behave like memopt's seeds; its answer prompt even forbids abstaining."""
    mem0 = json.loads((FIXTURES / "mem0_default_prompts.json").read_text())
    assert active_directives("extract", mem0["FACT_RETRIEVAL_PROMPT"]) == frozenset()
    assert active_directives("update", mem0["DEFAULT_UPDATE_MEMORY_PROMPT"]) == frozenset()
    assert directive_stances("answer", mem0["MEMORY_ANSWER_PROMPT"]) == {"abstain": -1}


def test_memopt_directives_prints_the_catalogue():
    done = subprocess.run([sys.executable, "-m", "memopt", "directives", "--markdown"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout == catalogue_table() + "\n"


if __name__ == "__main__":
    for name in ("dev", "heldout"):
        result = corpus_figures(name)
        print(f"{name:8s} recognised {result['recognised']:.1%} of {result['grants']} paraphrases; false triggers "
              f"{result['false']:.1%} of {result['negatives']} other sentences; cross triggers {result['cross']:.1%}")
