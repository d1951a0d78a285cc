"""How SimLM's reader would read authors it has not seen, for each setting of its classifier: a leave-one-corpus-out
sweep that chose ``C`` and the agreement thresholds of `memopt.simlm.learned`.

For each regularisation ``C`` and each corpus SimLM ships, the classifier is fitted on every *other* corpus (and the
catalogue's sentences, as shipped); the held-out corpus is then read with each setting of the thresholds (AGREE,
SURE, OVERRIDE, OVERRIDE_PLAIN). The table sums the corpora: recognised, false triggers, read backwards, and how many
corpora meet issue 21's targets (≥ 92 % recognised, 0 backwards, ≤ 5 % false). Slow (about 15 s per corpus and
``C`` on 2 cores), so a tool, not a test:

    python -m tests.simlm.reader_sweep --c 10,100 --agree 0.2,0.3 --sure 0.6,0.7 --override 0.8,0.9 --plain 0.95
"""

from __future__ import annotations

import argparse
import itertools
from collections import Counter
from collections.abc import Iterator

from memopt.simlm import learned
from tests.directive_corpora import corpus_figures, corpus_path, shipped_corpora

Setting = tuple[float, float, float, float]
COUNTS = ("grants", "negatives", "recognised", "backwards", "cross", "false")


def held_out_counts(cs: list[float], settings: list[Setting]) -> Iterator[tuple[float, Setting, str, dict[str, int]]]:
    """``(C, setting, corpus, counts)`` for every corpus held out in turn, each ``C`` and each threshold setting."""
    from memopt.simlm.directives import CATALOGUE_SENTENCES, read_stances

    names = shipped_corpora()
    shipped = (learned._C, learned.AGREE, learned.SURE, learned.OVERRIDE, learned.OVERRIDE_PLAIN)
    try:
        for c in cs:
            learned._C = c
            for name in names:
                others = [corpus_path(n) for n in names if n != name]
                model = learned.fit([*learned.corpus_items(others),
                                     *({"text": t, "expect": e} for t, e in CATALOGUE_SENTENCES)])
                items = learned.corpus_items([corpus_path(name)])
                for setting in settings:
                    learned.AGREE, learned.SURE, learned.OVERRIDE, learned.OVERRIDE_PLAIN = setting
                    figures = corpus_figures(items, lambda op, text, m=model: read_stances(op, text, m))
                    yield c, setting, name, {k: figures[k] for k in COUNTS}
    finally:
        learned._C, learned.AGREE, learned.SURE, learned.OVERRIDE, learned.OVERRIDE_PLAIN = shipped


def meets_targets(counts: dict[str, int]) -> bool:
    """Issue 21's targets on one corpus: ≥ 92 % recognised, 0 read backwards, ≤ 5 % false triggers."""
    return (counts["recognised"] >= 0.92 * counts["grants"] and counts["backwards"] == 0
            and counts["false"] <= 0.05 * counts["negatives"])


def table(rows: list[tuple[float, Setting, str, dict[str, int]]]) -> list[str]:
    """One line per (C, setting), best recognised first: the sums over the held-out corpora."""
    sums: dict[tuple[float, Setting], Counter[str]] = {}
    met: Counter[tuple[float, Setting]] = Counter()
    worst: dict[tuple[float, Setting], float] = {}
    for c, setting, _, counts in rows:
        sums.setdefault((c, setting), Counter()).update(counts)
        met[(c, setting)] += meets_targets(counts)
        worst[(c, setting)] = max(worst.get((c, setting), 0.0), counts["false"] / counts["negatives"])
    n = len({name for *_, name, _ in rows})
    lines = []
    for key in sorted(sums, key=lambda k: sums[k]["recognised"] / sums[k]["grants"], reverse=True):
        (c, s), total = key, sums[key]
        lines.append(f"C={c:g} agree={s[0]} sure={s[1]} override={s[2]} plain={s[3]}: recognised "
                     f"{total['recognised'] / total['grants']:.1%}, false {total['false'] / total['negatives']:.1%} "
                     f"(worst corpus {worst[key]:.1%}), backwards {total['backwards']}, cross {total['cross']}, "
                     f"targets met on {met[key]} of {n}")
    return lines


def main(argv: list[str] | None = None) -> None:
    """Run the sweep and print its table (the current setting is marked by nothing: read it in learned.py)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])

    def floats(text: str) -> list[float]:
        return [float(x) for x in text.split(",")]

    parser.add_argument("--c", type=floats, default=[learned._C])
    parser.add_argument("--agree", type=floats, default=[learned.AGREE])
    parser.add_argument("--sure", type=floats, default=[learned.SURE])
    parser.add_argument("--override", type=floats, default=[learned.OVERRIDE])
    parser.add_argument("--plain", type=floats, default=[learned.OVERRIDE_PLAIN])
    parser.add_argument("--per-corpus", action="store_true", help="print each held-out corpus's counts too")
    args = parser.parse_args(argv)
    settings = list(itertools.product(args.agree, args.sure, args.override, args.plain))
    rows = []
    for row in held_out_counts(args.c, settings):
        rows.append(row)
        if args.per_corpus:
            print(f"C={row[0]:g} {row[1]} {row[2]}: {row[3]}", flush=True)
        elif row[1] == settings[-1]:
            print(f"C={row[0]:g}: {row[2]} held out", flush=True)
    print("\n".join(table(rows)))


if __name__ == "__main__":
    main()
