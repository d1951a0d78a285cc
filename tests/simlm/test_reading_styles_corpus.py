"""SimLM's directive reading on a second corpus, in many styles, split by a hash into a tuned and a held-out half.

tests/fixtures/directive_corpus_styles.yaml (issue 21) holds, per directive, sentences that must turn it on and
near-misses that must not, in the style of real memory-system prompts and with the constructions an independent
audit found broken (passive and modal prohibitions, "refrain from", "unless", "rather than", "as well as", "is not
your job"). The split is fixed: a sentence is held out when its SHA-256 is odd (`half_of`). The reader was first tuned
on the tuned half only and the held-out half measured once (90.3 % recognised, 5 read backwards); that half has
been tuning material since (issue 21), as has the fresh corpus (tests/simlm/test_reading_fresh_corpus.py) after its one
measurement.
Both halves were written by the same author as the reader, so this is weaker evidence than an independent author's
corpus. Print the figures with ``python tests/simlm/test_reading_styles_corpus.py [tuned|heldout]``.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest
import yaml

from memopt.simlm import CATALOGUE, directive_stances

CORPUS = yaml.safe_load((Path(__file__).resolve().parents[1] / "fixtures" / "directive_corpus_styles.yaml").read_text())
OPERATIONS = sorted({op for d in CATALOGUE for op in d.operations})


def half_of(sentence: str) -> str:
    """The half a sentence belongs to: 'heldout' when its SHA-256 is odd, else 'tuned'."""
    return "heldout" if int(hashlib.sha256(sentence.encode("utf-8")).hexdigest(), 16) % 2 else "tuned"


def _stances(operations: tuple[str, ...] | list[str], sentence: str) -> dict[str, int]:
    merged: dict[str, int] = {}
    for op in operations:
        merged.update(directive_stances(op, sentence))
    return merged


def corpus_figures(half: str) -> dict[str, object]:
    """Recognised, read-backwards, cross-triggered and false-triggered shares of one half, with the misses."""
    misses: list[str] = []
    grants = recognised = backwards = cross = negatives = false = 0
    for directive in CATALOGUE:
        entry = CORPUS[directive.id]
        for sentence in (s for s in entry["grant"] if half_of(s) == half):
            stances = _stances(directive.operations, sentence)
            grants += 1
            stance = stances.get(directive.id, 0)
            recognised += stance > 0
            backwards += stance < 0
            if stance <= 0:
                misses.append(f"{'backwards' if stance else 'missed'} {directive.id}: {sentence}")
            others = {k for k, v in stances.items() if v > 0} - {directive.id}
            if others:
                cross += 1
                misses.append(f"cross   {directive.id} -> {sorted(others)}: {sentence}")
        for sentence in (s for s in entry["other"] if half_of(s) == half):
            negatives += 1
            if _stances(directive.operations, sentence).get(directive.id, 0) > 0:
                false += 1
                misses.append(f"false   {directive.id}: {sentence}")
    for sentence in (s for s in CORPUS["unrelated"] if half_of(s) == half):
        negatives += 1
        on = sorted(k for k, v in _stances(OPERATIONS, sentence).items() if v > 0)
        if on:
            false += 1
            misses.append(f"false   {on}: {sentence}")
    return {"grants": grants, "recognised": recognised / grants, "backwards": backwards, "cross": cross / grants,
            "negatives": negatives, "false": false / negatives, "misses": misses}


def test_the_split_is_fixed_and_both_halves_are_big_enough():
    assert half_of("Abstain when unsure.") == half_of("Abstain when unsure.")
    for half in ("tuned", "heldout"):
        figures = corpus_figures(half)
        assert figures["grants"] >= 60 and figures["negatives"] >= 50, (half, figures["grants"], figures["negatives"])
    for directive in CATALOGUE:
        assert len(CORPUS[directive.id]["grant"]) >= 20 and len(CORPUS[directive.id]["other"]) >= 15, directive.id


def test_tuned_half_meets_the_targets():
    figures = corpus_figures("tuned")
    assert figures["recognised"] >= 0.92, figures
    assert figures["false"] <= 0.05, figures
    assert figures["backwards"] == 0, figures
    assert figures["cross"] <= 0.05, figures


def test_the_once_heldout_half_now_meets_the_targets_too():
    """Measured once as a held-out half (65 of 72 recognised, 90.3 %; 5 read backwards; 2 of 77 false triggers).
    It has been seen since, so it became tuning material (issue 21; the fresh corpus,
    tests/simlm/test_reading_fresh_corpus.py, was the held-out measure next); the reader fixed its misses and must keep
    the targets on it."""
    figures = corpus_figures("heldout")
    assert figures["grants"] == 72 and figures["negatives"] == 77, figures
    assert figures["recognised"] >= 0.92, figures
    assert figures["false"] <= 0.05, figures
    assert figures["backwards"] == 0, figures
    assert figures["cross"] <= 0.05, figures


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
def test_constructions_of_english_read_the_right_way(sentence, op, stance):
    assert directive_stances(op, sentence) == stance

if __name__ == "__main__":
    for name in sys.argv[1:] or ["tuned"]:
        result = corpus_figures(name)
        print(f"{name:8s} recognised {result['recognised']:.1%} of {result['grants']}; read backwards "
              f"{result['backwards']}; cross {result['cross']:.1%}; false triggers {result['false']:.1%} of "
              f"{result['negatives']}")
        if name == "tuned":
            print("\n".join(result["misses"]))
