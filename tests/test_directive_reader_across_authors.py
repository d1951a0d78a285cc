"""The across-authors baselines (`tests.directive_reader_across_authors`): the classifier trains on other authors and
counts the held-out author's whole corpus; the agreement reader combines it with the rules by fixed thresholds."""

from __future__ import annotations

import pytest

from tests.directive_corpora import corpus_figures, load_corpus
from tests.directive_reader_across_authors import (
    AGREE,
    AUTHORS,
    OVERRIDE,
    SURE,
    agreement,
    held_out_figures,
    seed_prompt_readings,
)


@pytest.mark.slow  # trains two classifiers (CI runs it with -m slow)
def test_the_baseline_counts_every_item_of_the_held_out_author():
    figures = corpus_figures(load_corpus("eighth"))
    every_other, earlier = held_out_figures("eighth"), held_out_figures("fourth", earlier_only=True)
    assert (every_other["grants"], every_other["negatives"]) == (figures["grants"], figures["negatives"])
    assert every_other["grants"] / 2 < every_other["recognised"] <= every_other["grants"]
    assert 0 <= every_other["false"] < every_other["negatives"] / 2
    assert earlier["grants"] == corpus_figures(load_corpus("fourth"))["grants"] and AUTHORS[0] == "third"


@pytest.mark.slow  # trains a classifier on seven corpora
def test_the_learned_readers_on_the_tenth_author_at_their_one_measurement():
    """Trained on the third to ninth authors, measured once on the tenth (declared in docs/simlm.md before it was
    read): the classifier 154 of 158 recognised and 3 of 134 false; the agreement reader 153, 0 read backwards,
    3 false, 0 also turning on another directive. The rules on the same corpus: 136, 4, 10, 4."""
    figures = held_out_figures("tenth", earlier_only=True)
    both = figures["agreement"]
    assert (figures["grants"], figures["negatives"]) == (158, 134)
    assert figures["recognised"] >= 154 and figures["false"] <= 3
    assert both["recognised"] >= 153 and both["backwards"] == 0 and both["false"] <= 3 and both["cross"] == 0


@pytest.mark.slow  # trains a classifier on eight corpora
def test_the_learned_readers_on_the_eleventh_author_at_their_one_measurement():
    """Trained on the third to tenth authors, measured once on the eleventh (declared in docs/simlm.md before it was
    written): the classifier 161 of 168 recognised and 1 of 136 false; the agreement reader 157, 2 read backwards
    (the rules' "switched off" that the classifier, at 0.77 and 0.87, was not sure enough to overturn), 0 false,
    0 also turning on another directive. The rules on the same corpus: 135, 9, 6, 3."""
    figures = held_out_figures("eleventh", earlier_only=True)
    both = figures["agreement"]
    assert (figures["grants"], figures["negatives"]) == (168, 136)
    assert figures["recognised"] >= 161 and figures["false"] <= 1
    # since the rules' eighth pass (tuned on this corpus): 158 recognised, 1 read backwards
    assert both["recognised"] >= 158 and both["backwards"] <= 1 and both["false"] == 0 and both["cross"] == 0


@pytest.mark.slow  # trains a classifier on nine corpora
def test_the_learned_readers_on_the_twelfth_author_at_their_one_measurement():
    """Trained on the third to eleventh authors, measured once on the twelfth (declared in docs/simlm.md before it was
    written): the classifier 162 of 170 recognised and 11 of 142 false; the agreement reader 158, 2 read backwards,
    7 false, 0 also turning on another directive. The rules on the same corpus: 133, 7, 20, 4."""
    figures = held_out_figures("twelfth", earlier_only=True)
    both = figures["agreement"]
    assert (figures["grants"], figures["negatives"]) == (170, 142)
    assert figures["recognised"] >= 162 and figures["false"] <= 11
    # since the rules' eighth pass (tuned on this corpus): 160 recognised, 0 read backwards
    assert both["recognised"] >= 160 and both["backwards"] == 0 and both["false"] <= 7 and both["cross"] == 0


@pytest.mark.slow  # trains a classifier on ten corpora
def test_the_learned_readers_on_the_thirteenth_author_at_their_one_measurement():
    """Trained on the third to twelfth authors, measured once on the thirteenth (declared in docs/simlm.md before it
    was written): the classifier 152 of 166 recognised and 4 of 139 false; the agreement reader 138, 4 read
    backwards, 2 false, 0 also turning on another directive. The rules (after their eighth pass): 108, 8, 5, 2."""
    figures = held_out_figures("thirteenth", earlier_only=True)
    both = figures["agreement"]
    assert (figures["grants"], figures["negatives"]) == (166, 139)
    assert figures["recognised"] >= 152 and figures["false"] <= 4
    assert both["recognised"] >= 138 and both["backwards"] <= 4 and both["false"] <= 2 and both["cross"] == 0


@pytest.mark.slow  # trains a classifier on eleven corpora
def test_the_agreement_reader_misreads_two_seed_prompts_and_one_catalogue_phrasing():
    """Measured (docs/simlm.md), trained on every author (third to thirteenth): of memopt's seed prompts two of
    Mem0's read differently from the rules: in the update prompt the operation definitions ("ADD: add it to the
    memory as a new element", "DELETE: delete an existing memory element") turn on both update directives, and in
    the answer prompt a description of the context ("these memories contain timestamped information that may be
    relevant") turns on `combine_all`. Of the catalogue's phrasings and "turns it on" examples, one reads
    differently: the classifier vetoes the rules' `all_participants` in "Do not skip the second speaker's facts."
    (Trained on fewer authors the list was different: docs/simlm.md.) When the reader learns better, this test
    fails: update the docs with the new reading."""
    rows = seed_prompt_readings()
    seeds = [row for row in rows if row["text"].endswith("seed prompt")]
    assert {row["text"] for row in seeds} >= {"mem0.extract seed prompt", "mem0.update seed prompt",
                                              "mem0.answer seed prompt", "rag.rewrite_query seed prompt"}
    differing = [(row["text"], row["rules"], row["agreement"]) for row in rows if row["rules"] != row["agreement"]]
    assert differing == [
        ("mem0.update seed prompt", {}, {"update_on_contradiction": 1, "delete_only_explicit": 1}),
        ("mem0.answer seed prompt", {"resolve_dates": 1}, {"resolve_dates": 1, "combine_all": 1}),
        ("Do not skip the second speaker's facts.", {"all_participants": 1}, {})]


def test_a_rule_grant_stays_on_only_if_the_classifier_gives_it_enough():
    assert agreement({"abstain": 1}, {"abstain": AGREE, "combine_all": 0.2, "none": 1 - AGREE - 0.2}) == {"abstain"}
    assert agreement({"abstain": 1}, {"abstain": AGREE - 0.01, "none": 1 - AGREE + 0.01}) == set()


def test_the_classifier_alone_turns_on_its_top_directive_when_sure():
    assert agreement({}, {"combine_all": SURE, "none": 1 - SURE}) == {"combine_all"}
    assert agreement({}, {"combine_all": SURE - 0.01, "none": 1 - SURE + 0.01}) == set()
    assert agreement({"abstain": 1}, {"none": 0.95, "abstain": 0.05}) == set()


def test_the_rules_switching_a_directive_off_are_overturned_only_at_the_override():
    assert agreement({"abstain": -1}, {"abstain": OVERRIDE, "none": 1 - OVERRIDE}) == {"abstain"}
    assert agreement({"abstain": -1}, {"abstain": SURE + 0.1, "none": 0.9 - SURE}) == set()
