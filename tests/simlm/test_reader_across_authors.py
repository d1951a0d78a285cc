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


# Each author after the ninth, measured once by the learned readers trained on the authors before it (declared in
# docs/simlm.md before the corpus was written or read): (on items, none items), the classifier's recognised and
# false, and the agreement reader's recognised, read backwards, false (it never turned on another directive). The
# eleventh and twelfth are pinned at their figures since the rules' eighth pass, tuned on them (at the measurement:
# 157 and 2 backwards; 158 and 2). The rules' own figures are pinned in tests/fixtures/directive_corpora.yaml
# (tests/simlm/test_corpora.py).
ONE_MEASUREMENT = {
    "tenth": ((158, 134), (154, 3), (153, 0, 3)),
    "eleventh": ((168, 136), (161, 1), (158, 1, 0)),
    "twelfth": ((170, 142), (162, 11), (160, 0, 7)),
    "thirteenth": ((166, 139), (152, 4), (138, 4, 2)),
}


@pytest.mark.slow  # trains a classifier on seven to ten corpora
@pytest.mark.parametrize("author", list(ONE_MEASUREMENT))
def test_the_learned_readers_on_an_author_at_their_one_measurement(author):
    sizes, (recognised, false), (agreed, backwards, agreed_false) = ONE_MEASUREMENT[author]
    figures = held_out_figures(author, earlier_only=True)
    both = figures["agreement"]
    assert (figures["grants"], figures["negatives"]) == sizes
    assert figures["recognised"] >= recognised and figures["false"] <= false
    assert both["recognised"] >= agreed and both["backwards"] <= backwards and both["false"] <= agreed_false
    assert both["cross"] == 0


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
