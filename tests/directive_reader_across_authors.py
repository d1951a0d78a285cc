"""A learned baseline for SimLM's directive reader, across authors (issue 21): does a plain text classifier trained
on some authors' sentences read another author's better than the rule reader does?

For each corpus by a new author (third to thirteenth, `tests/directive_corpora.py`'s format), a classifier is trained on
the others and tested on it: TF-IDF of character 2–5-grams and word 1–2-grams, and a logistic regression over
the labels (a directive id, or ``none``), the prediction restricted to ``none`` and the directives of the item's
operation. "Recognised" and "false" count as in `tests.directive_corpora.corpus_figures`; a classifier has no
stance −1, so it reads nothing backwards, and it says nothing about sentences that switch a directive off. Beside
it, the classifier trained only on the authors before the held-out one (what the rule reader's passes had
seen when that corpus was measured once), and the rule reader on the same corpus today: tuning figures, except
for a corpus its passes have not read (the eighth to thirteenth, measured once).

The **agreement reader** (`agreement`) combines the two: a directive the rules turn on stays on only if the
classifier gives it at least ``AGREE``; the classifier's top directive goes on by itself at ``SURE`` or more, and
over the rules' "switched off" (stance -1) only at ``OVERRIDE`` or more; otherwise the rules' -1 stands (read
backwards). Probabilities are renormalised over ``none`` and the item's operation's directives. The thresholds
were chosen on the sixth to ninth corpora, trained on the authors before each, and then fixed before the tenth
corpus was measured (and kept for the eleventh to thirteenth). Neither reader is in SimLM. scikit-learn comes
with MLflow.
Run: ``python -m tests.directive_reader_across_authors`` (``--seed-prompts``: the agreement reader beside the
rules on memopt's seed prompts and the catalogue's phrasings).
"""

from __future__ import annotations

from typing import Any

from memopt.simlm import CATALOGUE, directive_stances
from tests.directive_corpora import corpus_figures, load_corpus

__all__ = ["AUTHORS", "AGREE", "SURE", "OVERRIDE", "agreement", "agreement_stances", "held_out_figures",
           "seed_prompt_readings"]

AUTHORS = ("third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "eleventh", "twelfth",
           "thirteenth")


def _classifier(train: list[dict[str, str]]) -> Any:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline, make_union

    features = make_union(TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True, min_df=2),
                          TfidfVectorizer(analyzer="word", ngram_range=(1, 2), sublinear_tf=True))
    model = make_pipeline(features, LogisticRegression(max_iter=2000, C=10.0))
    return model.fit([item["text"] for item in train], [item["expect"] for item in train])


AGREE, SURE, OVERRIDE = 0.3, 0.7, 0.9


def agreement(stances: dict[str, int], probabilities: dict[str, float]) -> set[str]:
    """The directives the agreement reader turns on, from the rules' ``stances`` and the classifier's
    ``probabilities`` (over ``none`` and the operation's directives, summing to 1)."""
    on = {d for d, stance in stances.items() if stance > 0 and probabilities.get(d, 0.0) >= AGREE}
    top = max(probabilities, key=lambda label: probabilities[label])
    if top != "none" and probabilities[top] >= SURE and (stances.get(top, 0) >= 0 or probabilities[top] >= OVERRIDE):
        on.add(top)
    return on


def _within(probabilities: Any, labels: list[str], allowed: list[str]) -> dict[str, float]:
    """The classifier's probabilities of the ``allowed`` labels, renormalised to sum to 1."""
    total = sum(probabilities[labels.index(label)] for label in allowed)
    return {label: probabilities[labels.index(label)] / total for label in allowed}


def agreement_stances(model: Any, operation: str, instructions: str) -> dict[str, int]:
    """The agreement reader on a whole instruction, as SimLM's rules read one: sentence by sentence (the last sentence
    about a directive speaks for it), a demonstration of a directive's behaviour turning it on."""
    from memopt.simlm import directives_for
    from memopt.simlm.demonstrations import demonstrated
    from memopt.simlm.instructions import read_sentences
    from memopt.simlm.stance import sentence_stance

    labels = list(model.classes_)
    directives = [d for d in directives_for(operation) if d.id in labels]
    allowed = ["none", *(d.id for d in directives)]
    stances = dict.fromkeys((d.id for d in directives), 0)
    for sentence in read_sentences(instructions):
        rules = {d.id: sentence_stance(d.cues, sentence) for d in directives}
        on = agreement({k: v for k, v in rules.items() if v},
                       _within(model.predict_proba([sentence.whole.text])[0], labels, allowed))
        for d in directives:
            stance = 1 if d.id in on else -1 if rules[d.id] < 0 else 0
            stances[d.id] = stance or stances[d.id]
    stances.update((d.id, 1) for d in directives if demonstrated(d.id, instructions))
    return {k: v for k, v in stances.items() if v}


def seed_prompt_readings() -> list[dict[str, Any]]:
    """The agreement reader (trained on every author) beside the rules on memopt's seed prompts, each read as the
    operation it serves, and on every catalogue phrasing and "turns it on" example: one row per reading."""
    from memopt.bench.oracle import _kind
    from memopt.systems.registry import make_system

    model = _classifier([item for name in AUTHORS for item in load_corpus(name)])
    rows = []
    for pipeline in ("mem0", "rag", "long_context", "evermemos"):
        system = make_system(pipeline)
        for op, text in system.instructions().items():
            kind = _kind(system, op)
            if kind is None:
                continue
            rules, both = directive_stances(kind, text), agreement_stances(model, kind, text)
            rows.append({"text": f"{pipeline}.{op} seed prompt", "operation": kind, "rules": rules, "agreement": both})
    for directive in CATALOGUE:
        for text in (*directive.phrasings, *directive.examples_on):
            for kind in directive.operations:
                rows.append({"text": text, "operation": kind, "rules": directive_stances(kind, text),
                             "agreement": agreement_stances(model, kind, text)})
    return rows


def held_out_figures(held: str, *, earlier_only: bool = False) -> dict[str, Any]:
    """The classifier trained on every other author (``earlier_only``: on the authors before ``held``, what the rule
    reader had been tuned on when ``held`` was measured once), on ``held``: grants, recognised, negatives, false."""
    others = AUTHORS[:AUTHORS.index(held)] if earlier_only else [name for name in AUTHORS if name != held]
    model = _classifier([item for name in others for item in load_corpus(name)])
    ops = {d.id: set(d.operations) for d in CATALOGUE}
    labels = list(model.classes_)
    test = load_corpus(held)
    counts = {"grants": 0, "recognised": 0, "negatives": 0, "false": 0,
              "agreement": {"recognised": 0, "backwards": 0, "false": 0, "cross": 0}}
    both = counts["agreement"]
    for item, probabilities in zip(test, model.predict_proba([item["text"] for item in test]), strict=True):
        allowed = [label for label in labels if label == "none" or item["op"] in ops.get(label, ())]
        read = max(allowed, key=lambda label: probabilities[labels.index(label)])
        stances = directive_stances(item["op"], item["text"])
        on = agreement(stances, _within(probabilities, labels, allowed))
        if item["expect"] == "none":
            counts["negatives"] += 1
            counts["false"] += read != "none"
            both["false"] += bool(on)
        else:
            counts["grants"] += 1
            counts["recognised"] += read == item["expect"]
            both["recognised"] += item["expect"] in on
            both["backwards"] += item["expect"] not in on and stances.get(item["expect"], 0) < 0
            both["cross"] += bool(on - {item["expect"]})
    return counts


def main() -> None:
    """Print, per held-out author, the classifier's and the agreement reader's figures beside the rule reader's, and
    the agreement reader's mean over authors with a 95 % interval (t over authors)."""
    from memopt.core.stats import mean_sd, t_quantile

    print("| held-out author | classifier, trained on every other author: recognised, false | trained on the authors "
          "before it | agreement reader, trained on the authors before it: recognised, read backwards, false | "
          "agreement reader, trained on every other author | rule reader today: recognised, read backwards, false |")
    print("|---|---|---|---|---|---|")
    shares: dict[str, list[float]] = {"recognised": [], "false": []}

    def figures(f: dict[str, Any], a: dict[str, Any]) -> str:
        return f"{a['recognised'] / f['grants']:.1%}, {a['backwards']}, {a['false'] / f['negatives']:.1%}"

    for held in AUTHORS:
        c, r = held_out_figures(held), corpus_figures(load_corpus(held))
        before = held_out_figures(held, earlier_only=True) if held != AUTHORS[0] else None
        earlier = f"{before['recognised'] / before['grants']:.1%}, {before['false'] / before['negatives']:.1%}" \
            if before else "—"
        shares["recognised"].append(c["agreement"]["recognised"] / c["grants"])
        shares["false"].append(c["agreement"]["false"] / c["negatives"])
        print(f"| {held} | {c['recognised'] / c['grants']:.1%} of {c['grants']}, {c['false'] / c['negatives']:.1%} | "
              f"{earlier} | {figures(before, before['agreement']) if before else '—'} | {figures(c, c['agreement'])} | "
              f"{figures(r, r)} |")
    for name, values in shares.items():
        mean, sd = mean_sd(values)
        half = t_quantile(0.975, len(values) - 1) * sd / len(values) ** 0.5
        print(f"agreement reader, trained on every other author, {name}: mean {mean:.1%} over {len(values)} authors, "
              f"95 % interval [{mean - half:.1%}, {mean + half:.1%}]")


if __name__ == "__main__":
    import sys

    if "--seed-prompts" in sys.argv:
        readings = seed_prompt_readings()
        for row in readings:
            if row["rules"] != row["agreement"]:
                print(f"{row['operation']}: rules {row['rules']}, agreement {row['agreement']}: {row['text'][:100]}")
        print(f"{sum(r['rules'] != r['agreement'] for r in readings)} of {len(readings)} read differently")
    else:
        main()
