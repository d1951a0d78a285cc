"""`memopt bench optimize` over seeds: rows with mean ± sd and intervals, claims paired by seed, the Markdown."""

from __future__ import annotations

from memopt.bench.optimize import CLAIMS, markdown_table, optimize_rows
from memopt.bench.seeds import compare, interval


def _runs(gains: dict[str, list[float]]) -> list[dict]:
    return [{"experiment": "quickstart", "optimizer": o, "seed": seed, "test_f1_before": 0.25,
             "test_f1_after": 0.25 + g, "gain": g, "lm_calls": 6000, "seconds": 2.0}
            for o, values in gains.items() for seed, g in enumerate(values)]


def test_optimize_rows_comparisons_and_markdown():
    gains = {"memtrace": [0.40, 0.38, 0.42, 0.39, 0.41], "gepa_outcome": [0.25, 0.36, 0.20, 0.30, 0.28],
             "score_only": [0.20, 0.22, 0.18, 0.21, 0.19]}
    runs = _runs(gains)
    rows = optimize_rows(runs, {"test_f1": 0.69, "seed_test_f1": 0.25, "seconds": 3.0}, list(gains), "quickstart")
    by = {r["optimizer"]: r for r in rows}
    assert by["memtrace"]["gain"] == 0.4 and by["memtrace"]["seeds"] == 5
    assert by["memtrace"]["gain_low"] < 0.4 < by["memtrace"]["gain_high"]
    assert by["oracle (all directives)"]["gain"] == 0.44
    comparisons = compare(runs, CLAIMS, variant_key="optimizer")
    assert comparisons["memtrace > gepa_outcome"]["verdict"] == "holds"
    assert comparisons["gepa_outcome > score_only"]["verdict"] == "holds"
    assert comparisons["gepa > gepa_outcome"]["verdict"] == "n/a"  # gepa not run
    text = markdown_table({"rows": rows, "comparisons": {"quickstart": comparisons}})
    gain = interval(gains["memtrace"])
    assert (f"| quickstart | memtrace | 5 | 0.250 | 0.650 ± 0.016 | +0.400 ± 0.016 | "
            f"[{gain['low']:+.3f}, {gain['high']:+.3f}] | 0.91 | 6,000 | 0.067 |") in text
    assert "| memtrace > gepa_outcome | 5 |" in text and "| gepa > gepa_outcome | 0 | — | — | — | n/a |" in text


def test_equivalence_needs_the_interval_inside_the_margin():
    close = _runs({"a": [0.20, 0.21, 0.19, 0.20, 0.20], "b": [0.20, 0.20, 0.20, 0.21, 0.19]})
    wide = _runs({"a": [0.10, 0.30, 0.15, 0.35, 0.20], "b": [0.20, 0.20, 0.20, 0.21, 0.19]})
    from memopt.bench.seeds import Claim

    same = Claim("a", "b", equivalent=True)
    assert compare(close, [same], variant_key="optimizer")["a ≈ b"]["verdict"] == "holds"
    assert compare(wide, [same], variant_key="optimizer")["a ≈ b"]["verdict"] == "not significant"
