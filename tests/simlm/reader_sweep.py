"""How SimLM's reader would read authors it has not seen, for each setting of its classifier: a leave-one-corpus-out
sweep that chose the features, ``C`` and the agreement thresholds of `memopt.simlm.learned`.

For each feature set (``--features``: ``shipped``, or a variant below), each regularisation ``C`` and each corpus
SimLM ships, the classifier is fitted on every *other* corpus (and the catalogue's sentences, as shipped); each
sentence of the held-out corpus is read once (the rules' stances, the classifier's probabilities), and then with each
setting of the thresholds (AGREE, SURE, OVERRIDE, OVERRIDE_PLAIN). The table sums the corpora: recognised, false
triggers, read backwards (and why: `CAUSES`), and how many corpora meet issue 21's targets (≥ 92 % recognised,
0 backwards, ≤ 5 % false). Every setting must also pass the *canonical checks* (`canonical_failures`) with the
classifier trained on all the corpora: the catalogue's own sentences, Mem0 2.x's documented custom-instruction
lines, and the sentences of the real prompts pinned in ``tests/fixtures/prompt_readings.yaml``. Slow (a fit is
about 20 s on 2 cores, 21 per feature set and ``C``), so a tool, not a test:

    python -m tests.simlm.reader_sweep --c 10,100 --agree 0.2,0.3 --sure 0.6,0.7 --override 0.8,0.9 --plain 0.95
"""

from __future__ import annotations

import argparse
import itertools
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from memopt.simlm import learned
from tests.directive_corpora import corpus_path, operations, shipped_corpora

Setting = tuple[float, float, float, float]
COUNTS = ("grants", "negatives", "recognised", "backwards", "cross", "false")
CAUSES = ("vetoed", "rules_against", "both_against")
MISSES = ("classifier_veto", "unsure", "elsewhere")
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
# Mem0 2.x's custom instructions as its documentation writes them (tests/simlm/test_mem0_formats.py).
MEM0_LINES = (("extract", "Extract the facts of both speakers.", "all_participants"),
              ("extract", "Resolve relative dates.", "resolve_dates"))


def _stemmed(text: str) -> tuple[list[str], list[str]]:
    """The shipped n-grams, with word 1–2-grams of Porter stems instead of words."""
    from memopt.core.text import stem

    chars, _ = _SHIPPED(text)
    tokens = [stem(w) for w in learned._WORD.findall(text.lower())]
    return chars, tokens + [f"{a} {b}" for a, b in zip(tokens, tokens[1:], strict=False)]


_NAME = re.compile(r"(?<=[\w,;] )[A-Z][a-z]+\b")
_DIGITS = re.compile(r"\d+")


def _normalised(text: str) -> tuple[list[str], list[str]]:
    """The n-grams of ``text`` with the names an author happens to use (a capitalised word inside a sentence) as
    "Xx" and every number as "00", and word 1–2-grams of Porter stems: what transfers from one author to another."""
    return _stemmed(_DIGITS.sub("00", _NAME.sub("Xx", text)))


_SHIPPED = learned._grams
FEATURES: dict[str, Callable[[str], tuple[list[str], list[str]]]] = {"shipped": _SHIPPED, "stemmed": _stemmed,
                                                                     "normalised": _normalised}


# Stages of the rule reader (`memopt.simlm.instructions.read_words`) a sweep can leave out (``--rules``), to see
# whether the held-out corpora need them.
STAGES = {"prohibitions": ("privative_nothing", "more_than_as_only", "mark_prohibited_subjects"),
          "labels": ("restore_gapped_verb", "mark_literal_replies", "mark_label_negation"),
          "hedges": ("drop_hedges",), "rationale": ("mark_rationale",), "conditions": ("mark_conditions",)}


def _rules(without: str) -> None:
    """Set the rule reader to every stage but the group ``without`` (``shipped``: every stage)."""
    from memopt.simlm import instructions, stance

    for group, names in STAGES.items():
        for name in names:
            original = getattr(instructions, f"_shipped_{name}", None) or getattr(instructions, name)
            setattr(instructions, f"_shipped_{name}", original)
            setattr(instructions, name, (lambda words: words) if group == without else original)
    instructions.read_sentences.cache_clear()
    for cached in vars(stance).values():
        if hasattr(cached, "cache_clear"):
            cached.cache_clear()


def _fit(items: list[dict[str, Any]], models: Path | None, name: str) -> learned.Classifier:
    """A classifier fitted on ``items``, or read from ``models`` where a sweep saved it under ``name``."""
    path = models / f"{name}.npz" if models else None
    model = learned._load(path) if path and path.exists() else None
    if model is None:
        model = learned.fit(items)
        if path:
            learned._save(path, model)
    return model


def _read(model: learned.Classifier, op: str, text: str) -> list[tuple[dict[str, int], dict[str, float], bool]]:
    """Each sentence of ``text`` for ``op``: the rules' stances, the classifier's probabilities, whether scoped."""
    from memopt.simlm.directives import directives_for, read_sentences, sentence_stance

    directives = directives_for(op)
    allowed = ("none", *(d.id for d in directives))
    out = []
    for sentence in read_sentences(text):
        rules = {d.id: s for d in directives if (s := sentence_stance(d.cues, sentence))}
        out.append((rules, learned.probabilities(model.scores(sentence.text), allowed),
                    any(w.scope for w in sentence.whole.words)))
    return out


def _stances(rows: list[tuple[dict[str, int], dict[str, float], bool]], shown: set[str]) -> dict[str, int]:
    """What the sentences' ``rows`` read under the thresholds now set in `learned` (as `read_stances`)."""
    stances: dict[str, int] = {}
    for rules, probs, scoped in rows:
        on = learned.agreement(rules, probs, scoped=scoped)
        stances.update({d: 1 if d in on else -1 for d in {*on, *(d for d, v in rules.items() if v < 0)}})
    stances.update(dict.fromkeys(shown, 1))
    return stances


def read_corpus(model: learned.Classifier, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each item with, per operation, its sentences' rows and the directives a demonstration in it shows."""
    from memopt.simlm.demonstrations import demonstrated
    from memopt.simlm.directives import directives_for

    return [{**item, "reads": [(_read(model, op, item["text"]),
                                {d.id for d in directives_for(op) if demonstrated(d.id, item["text"])})
                               for op in operations(item)]} for item in items]


def _cause(item: dict[str, Any]) -> str:
    """Why an item reads backwards: the rules' 'off' vetoed a classifier sure of it (`vetoed`); the rules read it off
    and the classifier leant towards it, below SURE (`rules_against`); or both read it off or the classifier leant to
    something else (`both_against`)."""
    expect = item["expect"]
    for rows, _ in item["reads"]:
        for rules, probs, _ in rows:
            if rules.get(expect, 0) < 0:
                top = max(probs, key=probs.get)
                if top == expect:
                    return "vetoed" if probs[expect] >= learned.SURE else "rules_against"
    return "both_against"


def _missed(item: dict[str, Any]) -> str:
    """Why an item reads nothing: the rules granted it and the classifier gave it less than AGREE
    (`classifier_veto`); the rules were silent and the classifier's top was it, below SURE (`unsure`), or something
    else (`elsewhere`)."""
    expect, best = item["expect"], "elsewhere"
    for rows, _ in item["reads"]:
        for rules, probs, _ in rows:
            if rules.get(expect, 0) > 0:
                return "classifier_veto"
            if max(probs, key=probs.get) == expect:
                best = "unsure"
    return best


def figures(read: list[dict[str, Any]]) -> tuple[Counter[str], list[str]]:
    """Counts over a read corpus under the thresholds now set (as `tests.directive_corpora.corpus_figures`), the
    backwards readings by cause, and the misses."""
    counts: Counter[str] = Counter(dict.fromkeys(COUNTS, 0))
    misses = []
    for item in read:
        stances: dict[str, int] = {}
        for rows, shown in item["reads"]:
            for d, v in _stances(rows, shown).items():
                stances[d] = max(stances.get(d, v), v)
        on = sorted(d for d, v in stances.items() if v > 0)
        if item["expect"] == "none" or item["expect"].startswith("not "):
            counts["negatives"] += 1
            on = [d for d in on if d == item["expect"][4:]] if item["expect"].startswith("not ") else on
            if on:
                counts["false"] += 1
                misses.append(f"false {on}: {item['text']}")
            continue
        counts["grants"] += 1
        stance = stances.get(item["expect"], 0)
        counts["recognised"] += stance > 0
        counts["backwards"] += stance < 0
        if stance < 0:
            counts[f"backwards_{_cause(item)}"] += 1
        counts["cross"] += any(d != item["expect"] for d in on)
        if stance == 0:
            counts[f"missed_{_missed(item)}"] += 1
        if stance <= 0:
            why = f"backwards ({_cause(item)})" if stance else f"missed ({_missed(item)})"
            misses.append(f"{why} {item['expect']}: {item['text']}")
    return counts, misses


def canonical_items() -> list[tuple[str, str, dict[str, int] | None]]:
    """The canonical checks: (op, text, the stances it must read, or None for "turns on nothing outside what the
    prompt expresses") for the catalogue's sentences, Mem0 2.x's custom-instruction lines and every prompt of
    ``prompt_readings.yaml`` (its key stands for the text)."""
    from memopt.simlm.directives import CATALOGUE, IRRELEVANT

    checks: list[tuple[str, str, dict[str, int] | None]] = [(op, t, {d: 1}) for op, t, d in MEM0_LINES]
    ops = sorted({op for d in CATALOGUE for op in d.operations})
    for d in CATALOGUE:
        for op in d.operations:
            checks += [(op, t, {d.id: 1}) for t in (*d.phrasings, *d.examples_on)]
    checks += [(op, t, {}) for t in IRRELEVANT for op in ops]
    readings = yaml.safe_load((FIXTURES / "prompt_readings.yaml").read_text(encoding="utf-8"))
    checks += [(entry["op"], key, None) for key, entry in readings.items()]
    return checks


def canonical_failures(model: learned.Classifier) -> list[str]:
    """The canonical checks ``model`` fails under the thresholds now set: a one-liner that does not read exactly as
    it must; a prompt that turns on a directive its text does not express, turns off one it expresses, or reads a
    pinned sentence otherwise than pinned where the pin is not marked ``misread``."""
    from memopt.simlm.directives import read_stances, sentence_readings
    from tests.simlm.test_prompt_readings import READINGS, _text

    failed = []
    for op, text, must in canonical_items():
        if must is not None:
            if (got := read_stances(op, text, model)) != must:
                failed.append(f"{op} {text!r}: {got}")
            continue
        entry, prompt = READINGS[text], _text(text)
        got = read_stances(op, prompt, model)
        wrong = {d for d, v in got.items() if v > 0} - set(entry["expresses"])
        lost = {d for d in entry["expresses"] if entry["reads"].get(d) == 1 and got.get(d) != 1}
        pinned = {s["text"]: s for s in entry["sentences"]}
        moved = [f"{s[:60]!r} {said} (pinned {pinned.get(s, {}).get('reads', {})})"
                 for s, said in sentence_readings(op, prompt, model)
                 if said != pinned.get(s, {}).get("reads", {}) and "misread" not in pinned.get(s, {})]
        if wrong or lost or moved:
            failed.append(f"{text}: turns on {sorted(wrong)}, loses {sorted(lost)}; {moved}")
    return failed


def held_out(cs: list[float], features: list[str], settings: list[Setting], only: list[str] | None = None,
             rules: tuple[str, ...] = ("shipped",), models: Path | None = None) -> list[dict[str, Any]]:
    """One row per (features, rules, C, setting, corpus held out), then the canonical failures with every corpus."""
    from memopt.simlm.directives import CATALOGUE_SENTENCES

    catalogue = [{"text": t, "expect": e} for t, e in CATALOGUE_SENTENCES]
    names = shipped_corpora()
    saved = (learned._C, learned._grams, learned.AGREE, learned.SURE, learned.OVERRIDE, learned.OVERRIDE_PLAIN)
    rows: list[dict[str, Any]] = []
    try:
        for feature, c in itertools.product(features, cs):
            learned._C, learned._grams = c, FEATURES[feature]
            for name in [*(only or names), None]:
                model = _fit([*learned.corpus_items([corpus_path(n) for n in names if n != name]), *catalogue],
                             models, f"{feature}-{c:g}-{name or 'all'}")
                for without in rules:
                    _rules(without)
                    read = read_corpus(model, learned.corpus_items([corpus_path(name)])) if name else []
                    for setting in settings:
                        learned.AGREE, learned.SURE, learned.OVERRIDE, learned.OVERRIDE_PLAIN = setting
                        label = feature if without == "shipped" else f"{feature}-{without}"
                        row = {"features": label, "c": c, "setting": setting, "corpus": name}
                        if name is None:
                            row["canonical"] = canonical_failures(model)
                        else:
                            row["counts"], row["misses"] = figures(read)
                        rows.append(row)
                        yield_row(row)
    finally:
        _rules("shipped")
        learned._C, learned._grams, learned.AGREE, learned.SURE, learned.OVERRIDE, learned.OVERRIDE_PLAIN = saved
    return rows


def yield_row(row: dict[str, Any]) -> None:
    """Print one row as it comes (a sweep takes minutes)."""
    head = f"{row['features']} C={row['c']:g} {row['setting']}"
    if row["corpus"] is None:
        print(f"{head} canonical checks failed: {len(row['canonical'])}", *row["canonical"], sep="\n  ", flush=True)
    elif VERBOSE:
        print(f"{head} {row['corpus']}: {dict(row['counts'])}", *row["misses"], sep="\n  ", flush=True)


VERBOSE = False


def meets_targets(counts: Counter[str]) -> bool:
    """Issue 21's targets on one corpus: ≥ 92 % recognised, 0 read backwards, ≤ 5 % false triggers."""
    return (counts["recognised"] >= 0.92 * counts["grants"] and counts["backwards"] == 0
            and counts["false"] <= 0.05 * counts["negatives"])


def table(rows: list[dict[str, Any]]) -> list[str]:
    """One line per (features, C, setting), best recognised first: the sums over the held-out corpora, the backwards
    readings by cause, and the canonical checks failed."""
    sums: dict[tuple, Counter[str]] = {}
    met: Counter[tuple] = Counter()
    worst: dict[tuple, float] = {}
    canonical: dict[tuple, int] = {}
    for row in rows:
        key = (row["features"], row["c"], row["setting"])
        if row["corpus"] is None:
            canonical[key] = len(row["canonical"])
            continue
        counts = row["counts"]
        sums.setdefault(key, Counter()).update(counts)
        met[key] += meets_targets(counts)
        worst[key] = max(worst.get(key, 0.0), counts["false"] / counts["negatives"])
    n = len({row["corpus"] for row in rows} - {None})
    lines = []
    for key in sorted(sums, key=lambda k: sums[k]["recognised"] / sums[k]["grants"], reverse=True):
        (f, c, s), total = key, sums[key]
        causes = ", ".join(f"{cause} {total[f'backwards_{cause}']}" for cause in CAUSES)
        missed = ", ".join(f"{cause} {total[f'missed_{cause}']}" for cause in MISSES)
        lines.append(f"{f} C={c:g} agree={s[0]} sure={s[1]} override={s[2]} plain={s[3]}: recognised "
                     f"{total['recognised'] / total['grants']:.1%} (missed: {missed}), false "
                     f"{total['false'] / total['negatives']:.1%} "
                     f"(worst corpus {worst[key]:.1%}), backwards {total['backwards']} ({causes}), cross "
                     f"{total['cross']}, targets met on {met[key]} of {n}, canonical checks failed "
                     f"{canonical.get(key, '?')}")
    return lines


def main(argv: list[str] | None = None) -> None:
    """Run the sweep and print its table (the current setting is marked by nothing: read it in learned.py)."""
    global VERBOSE
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])

    def floats(text: str) -> list[float]:
        return [float(x) for x in text.split(",")]

    parser.add_argument("--c", type=floats, default=[learned._C])
    parser.add_argument("--features", type=lambda t: t.split(","), default=["shipped"],
                        help=f"feature sets, of {', '.join(FEATURES)}")
    parser.add_argument("--agree", type=floats, default=[learned.AGREE])
    parser.add_argument("--sure", type=floats, default=[learned.SURE])
    parser.add_argument("--override", type=floats, default=[learned.OVERRIDE])
    parser.add_argument("--plain", type=floats, default=[learned.OVERRIDE_PLAIN])
    parser.add_argument("--corpora", type=lambda t: t.split(","), default=None, help="hold out only these")
    parser.add_argument("--rules", type=lambda t: t.split(","), default=["shipped"],
                        help=f"rule readers: shipped, or shipped without one of {', '.join(STAGES)}")
    parser.add_argument("--models", type=Path, default=None, help="save the fits here, and read them back")
    parser.add_argument("--per-corpus", action="store_true", help="print each held-out corpus's counts and misses")
    args = parser.parse_args(argv)
    VERBOSE = args.per_corpus
    settings = list(itertools.product(args.agree, args.sure, args.override, args.plain))
    print("\n".join(table(held_out(args.c, args.features, settings, args.corpora, tuple(args.rules),
                                    args.models))))


if __name__ == "__main__":
    main()
