"""The learned half of SimLM's reader (`memopt.simlm.learned`): deterministic, cached as plain arrays, combined with
the rules by the agreement rule."""

from __future__ import annotations

import numpy as np

from memopt.simlm import learned
from memopt.simlm.learned import AGREE, OVERRIDE, OVERRIDE_PLAIN, SURE, agreement

ITEMS = [{"text": t, "expect": e} for t, e in [
    ("Convert relative dates into calendar dates.", "resolve_dates"),
    ("Turn 'yesterday' into the actual date.", "resolve_dates"),
    ("Keep every name and number in a fact.", "keep_details"),
    ("Never drop the places people mention.", "keep_details"),
    ("Write in a friendly tone.", "none"),
    ("Return JSON only.", "none"),
    ("Resolve relative dates into absolute dates.", "not keep_details"),  # no label: left out
]]


def test_a_fit_is_deterministic_and_leaves_out_unlabelled_near_misses():
    one, two = learned.fit(ITEMS), learned.fit(ITEMS)
    assert one.labels == ("keep_details", "none", "resolve_dates")
    assert np.array_equal(one.coef, two.coef) and one.terms == two.terms
    probs = learned.probabilities(one.scores("Please convert relative dates."), ("none", "resolve_dates"))
    assert probs["resolve_dates"] > probs["none"] and abs(sum(probs.values()) - 1) < 1e-9


def test_the_cache_gives_back_the_same_classifier_and_survives_a_broken_file(tmp_path):
    model = learned.fit(ITEMS)
    path = tmp_path / "fit.npz"
    learned._save(path, model)
    again = learned._load(path)
    assert again is not None and again.labels == model.labels and again.terms == model.terms
    for text in ("Keep the names.", "Convert the dates.", "unseen words entirely"):
        assert again.scores(text) == model.scores(text)
    path.write_bytes(b"not an archive")
    assert learned._load(path) is None  # then the process fits again and writes it anew


def test_the_cache_name_follows_the_training_sentences(tmp_path):
    corpus = tmp_path / "a.yaml"
    corpus.write_text("sentences:\n  - {text: Keep names., expect: keep_details, op: extract, style: x}\n")
    first = learned._key([corpus], ())
    assert learned._key([corpus], (("Keep numbers.", "keep_details"),)) != first
    corpus.write_text(corpus.read_text().replace("Keep names.", "Keep places."))
    assert learned._key([corpus], ()) != first


def test_the_agreement_rule():
    """A rule grant needs AGREE; the classifier alone needs SURE; over the rules' 'switched off' OVERRIDE, or
    OVERRIDE_PLAIN when no negation or contrast in the sentence carried it."""
    assert agreement({"abstain": 1}, {"abstain": AGREE, "none": 1 - AGREE}) == {"abstain"}
    assert agreement({"abstain": 1}, {"abstain": AGREE - 0.01, "none": 1 - AGREE + 0.01}) == set()
    assert agreement({}, {"combine_all": SURE, "none": 1 - SURE}) == {"combine_all"}
    assert agreement({}, {"combine_all": SURE - 0.01, "none": 1 - SURE + 0.01}) == set()
    sure = {"keep_details": OVERRIDE, "none": 1 - OVERRIDE}
    assert agreement({"keep_details": -1}, sure) == {"keep_details"}
    assert agreement({"keep_details": -1}, sure, scoped=False) == set()
    surer = {"keep_details": OVERRIDE_PLAIN, "none": 1 - OVERRIDE_PLAIN}
    assert agreement({"keep_details": -1}, surer, scoped=False) == {"keep_details"}


def test_a_plain_word_against_a_directive_is_not_overturned():
    """The misleading control's advice names the details it asks to drop; the classifier, reading topics, is sure it
    is about keeping details (0.9 and more), but the sentence asks for the opposite."""
    from memopt.simlm import directive_stances

    assert directive_stances("extract", "Facts should be short; drop names, numbers, places and dates.") == \
        {"keep_details": -1}
    assert directive_stances("extract", "Never drop names, numbers, places or dates.") == {"keep_details": 1}


def test_a_word_reads_the_same_with_its_punctuation():
    """The last word of a sentence carries its full stop: "dates." must give the classifier what "dates" gives (the
    plainest directive, "Resolve relative dates.", fell below AGREE when the stop made its own character n-grams)."""
    for plain, marked in (("Resolve relative dates", "Resolve relative dates."),
                          ("keep every name", "Keep every name!"), ("both speakers", "(both speakers)")):
        assert learned._grams(plain.lower()) == learned._grams(marked)
    model = learned.fit([{"text": "Resolve relative dates into absolute ones", "expect": "resolve_dates"},
                         {"text": "Keep the words as written.", "expect": "none"},
                         {"text": "Keep every name and number.", "expect": "keep_details"}] * 3)
    assert model.scores("Resolve relative dates.") == model.scores("Resolve relative dates")
