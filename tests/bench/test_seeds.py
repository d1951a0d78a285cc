"""`memopt bench optimize` over seeds: rows with mean ± sd and intervals, claims paired by seed, the Markdown."""

from __future__ import annotations

import pytest

from memopt.bench.optimize import CLAIMS, markdown_table, optimize_rows
from memopt.bench.seeds import compare, interval

REFERENCE = "reference (best subset on val)"


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
    assert by["reference (best subset on val)"]["gain"] == 0.44
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


def _tiny_quickstart(tmp_path):
    from tests.conftest import ROOT

    tiny = tmp_path / "tiny.yaml"
    text = (ROOT / "experiments" / "quickstart.yaml").read_text()
    tiny.write_text(text.replace("conversations=12,sessions=8", "conversations=4,sessions=3"))
    return tiny


def test_bench_optimize_reports_each_run_as_it_finishes_from_the_first_seed(tmp_path):
    from memopt.bench.optimize import bench_optimize

    heard = []
    report = bench_optimize([_tiny_quickstart(tmp_path)], budget=300, rounds=1, seeds=1,
                            variants=["score_only", "memtrace"], first_seed=5,
                            on_run=lambda run, so_far: heard.append((run, so_far)))
    assert [(run["optimizer"], run["seed"]) for run, _ in heard] == [("score_only", 5), ("memtrace", 5)]
    first, last = heard[0][1], heard[1][1]
    assert (first["complete"], len(first["runs"]), first["planned"]) == (False, 1, 2)  # a partial report, kept as is
    assert [r["optimizer"] for r in first["rows"]] == ["score_only", "reference (best subset on val)"]
    assert last["complete"] and last["runs"] == report["runs"] and report["complete"]
    assert [r["seed"] for r in report["runs"]] == [5, 5]


def _optimize_report(runs, experiments=("quickstart",), **changes):
    oracles = {name: {"test_f1": 0.69, "seed_test_f1": 0.25, "seconds": 3.0} for name in experiments}
    return {"budget": 12000, "rounds": 8, "seeds": 3, "planned": len(runs), "oracles": oracles, "runs": runs} | changes


def test_bench_merge_joins_optimize_reports_run_apart(tmp_path):
    import json
    import subprocess
    import sys

    from memopt.bench.optimize import merge_optimize
    from memopt.core.errors import ConfigError

    gains = {"memtrace": [0.38, 0.37, 0.38, 0.36, 0.37, 0.38], "gepa_outcome": [0.09, 0.05, 0.12, 0.03, 0.15, 0.08]}
    runs = _runs(gains)
    low, high = [r for r in runs if r["seed"] < 3], [r for r in runs if r["seed"] >= 3]
    locomo = [{**r, "experiment": "locomo_mem0"} for r in low]
    merged = merge_optimize({"a.json": _optimize_report(low), "b.json": _optimize_report(high),
                             "c.json": _optimize_report(locomo, experiments=("locomo_mem0",))})
    assert merged["comparisons"]["quickstart"] == compare(runs, CLAIMS, variant_key="optimizer")
    assert merged["comparisons"]["quickstart"]["memtrace > gepa_outcome"]["n"] == 6  # paired across the files
    assert merged["comparisons"]["locomo_mem0"]["memtrace > gepa_outcome"]["n"] == 3
    assert [(r["experiment"], r["optimizer"], r["seeds"]) for r in merged["rows"]] == [
        ("quickstart", "memtrace", 6), ("quickstart", "gepa_outcome", 6), ("quickstart", REFERENCE, 1),
        ("locomo_mem0", "memtrace", 3), ("locomo_mem0", "gepa_outcome", 3), ("locomo_mem0", REFERENCE, 1)]
    assert merged["complete"] and merged["seeds"] == 6
    with pytest.raises(ConfigError, match=r"b.json: quickstart memtrace at seed 0 is also in a.json; .*--first-seed"):
        merge_optimize({"a.json": _optimize_report(low), "b.json": _optimize_report(low[:1])})
    with pytest.raises(ConfigError, match=r"b.json: budget 6000, but a.json has 12000"):
        merge_optimize({"a.json": _optimize_report(low), "b.json": _optimize_report(high, budget=6000)})
    with pytest.raises(ConfigError, match=r"b.json: its oracle or seed prompts score differently from a.json's"):
        merge_optimize({"a.json": _optimize_report(low),
                        "b.json": _optimize_report(high, oracles={"quickstart": {"test_f1": 0.6}})})
    with pytest.raises(ConfigError, match=r"b.json: runs\[0\].lm_calls: expected a number, found 'many'; merge "):
        merge_optimize({"a.json": _optimize_report(low), "b.json": _optimize_report([{**high[0], "lm_calls": "many"}])})
    with pytest.raises(ConfigError, match=r"runs of 'locomo_mem0' but no report holds its oracle"):
        merge_optimize({"a.json": _optimize_report(low + locomo)})

    files = [tmp_path / "a.json", tmp_path / "b.json"]
    for path, part in zip(files, (low, high), strict=True):
        path.write_text(json.dumps(_optimize_report(part)))
    feedback = tmp_path / "f.json"
    feedback.write_text(json.dumps({"experiment": "quickstart", "budget": 6000, "rounds": 8, "oracle": {}, "runs": []}))
    done = subprocess.run([sys.executable, "-m", "memopt", "bench", "merge", *map(str, files), "--markdown"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "| quickstart | memtrace | 6 |" in done.stdout
    assert "quickstart: memtrace > gepa_outcome: holds" in done.stdout
    done = subprocess.run([sys.executable, "-m", "memopt", "bench", "merge", str(files[0]), str(feedback)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 2 and "is a `bench optimize` report and" in done.stderr, done.stderr


@pytest.mark.slow  # four optimizations (CI runs it with -m slow)
def test_bench_optimize_runs_seeds_and_prints_intervals_and_verdicts(tmp_path):
    import json
    import subprocess
    import sys

    tiny = _tiny_quickstart(tmp_path)
    done = subprocess.run([sys.executable, "-m", "memopt", "bench", "optimize", str(tiny), "--budget", "300",
                           "--rounds", "1", "--seeds", "2", "--first-seed", "3", "--optimizers", "memtrace,score_only",
                           "--markdown", "--out", "bench.json"], capture_output=True, text=True, timeout=600,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((tmp_path / "bench.json").read_text())
    assert [(r["optimizer"], r["seed"]) for r in report["runs"]] == [("memtrace", 3), ("score_only", 3),
                                                                     ("memtrace", 4), ("score_only", 4)]
    assert report["complete"] and "[1/4] quickstart memtrace seed 3: test F1 " in done.stderr
    assert "[4/4] quickstart score_only seed 4: test F1 " in done.stderr
    rows = {r["optimizer"]: r for r in report["rows"]}
    assert rows["memtrace"]["seeds"] == 2 and rows["memtrace"]["gain_low"] is not None
    claim = report["comparisons"]["quickstart"]["memtrace > score_only"]
    assert claim["n"] == 2 and claim["seeds"] == [3, 4]
    assert claim["verdict"] in ("holds", "reversed", "not significant", "seeds do not vary the runs")
    if claim["verdict"] == "seeds do not vary the runs":  # one round at 300 calls: both seeds give one result each
        assert claim["p"] is None and rows["memtrace"]["distinct_runs"] == 1
    assert "| quickstart | memtrace | 2" in done.stdout and "quickstart: memtrace > score_only:" in done.stdout


def test_a_claim_not_shown_says_how_many_seeds_would_show_it():
    from memopt.bench.seeds import Claim, comparison_table
    from memopt.core.stats import seeds_needed

    runs = _runs({"a": [0.30, 0.10, 0.25, 0.12, 0.28], "b": [0.18, 0.15, 0.16, 0.20, 0.14],
                  "c": [0.50, 0.52, 0.49, 0.51, 0.50]})
    claims = [Claim("a", "b"), Claim("b", "a"), Claim("c", "b"), Claim("a", "b", equivalent=True)]
    out = compare(runs, claims, variant_key="optimizer")
    shown, backwards, holds, same = (out[c.label] for c in claims)
    assert shown["verdict"] == "not significant" and shown["mean"] > 0
    assert shown["seeds_needed"] == seeds_needed(shown["mean"], shown["sd"]) > 5
    assert backwards["verdict"] == "not significant" and backwards["seeds_needed"] is None  # points the other way
    assert holds["verdict"] == "holds" and holds["seeds_needed"] is None
    assert same["seeds_needed"] is None
    table = comparison_table(out)
    assert "seeds it would need" in table.splitlines()[0]
    assert f"| not significant | {shown['seeds_needed']:,} |" in table
    assert table.count("| — |") >= 3


def test_the_bench_commands_print_the_seeds_a_claim_would_need(capsys):
    from memopt.bench.seeds import Claim
    from memopt.cli.bench import _print_claims

    runs = _runs({"a": [0.30, 0.10, 0.25, 0.12, 0.28], "b": [0.18, 0.15, 0.16, 0.20, 0.14]})
    out = compare(runs, [Claim("a", "b"), Claim("b", "a")], variant_key="optimizer")
    _print_claims(out, "quickstart")
    first, second = capsys.readouterr().out.splitlines()
    assert first.startswith("quickstart: a > b: not significant (")
    assert f"about {out['a > b']['seeds_needed']:,} seeds would show it if the difference held" in first
    assert "seeds would show it" not in second


def test_a_claim_beyond_the_seed_limit_is_printed_without_about(capsys):
    from memopt.bench.seeds import Claim
    from memopt.cli.bench import _print_claims
    from memopt.core.stats import MAX_SEEDS_NEEDED

    runs = _runs({"a": [0.40, 0.00, 0.35, 0.02, 0.281], "b": [0.30, 0.10, 0.25, 0.12, 0.28]})
    out = compare(runs, [Claim("a", "b")], variant_key="optimizer")
    assert out["a > b"]["seeds_needed"] == f"more than {MAX_SEEDS_NEEDED}"
    _print_claims(out, "quickstart")
    line = capsys.readouterr().out.strip()
    assert f"; more than {MAX_SEEDS_NEEDED:,} seeds would show it" in line and "about more" not in line


def test_a_claim_bounded_by_its_headroom_says_what_a_run_at_the_ceiling_would_need(capsys):
    """Outcome already near the oracle: even a run at the reference on every seed needs many seeds to beat it, and a
    1.5 × claim it cannot reach on average says never; far below the oracle, a few seeds would do."""
    from memopt.bench.seeds import Claim, comparison_table
    from memopt.cli.bench import _print_claims
    from memopt.core.stats import paired_test, seeds_needed

    near = [0.054, 0.109, 0.141, 0.081, 0.095]  # outcome's gains, the oracle's is 0.101
    runs = _runs({"attribution": [0.081, 0.103, 0.096, 0.095, 0.077], "outcome": near,
                  "score": [0.02, 0.03, 0.01, 0.04, 0.02]})
    claims = [Claim("attribution", "outcome"), Claim("attribution", "outcome", scale=1.5), Claim("outcome", "score"),
              Claim("score", "outcome", equivalent=True)]
    out = compare(runs, claims, variant_key="optimizer", ceiling=0.101)
    bounded, scaled, roomy, same = (out[c.label] for c in claims)
    at = paired_test([0.101] * 5, near)
    assert bounded["ceiling_seeds_needed"] == seeds_needed(at.mean, at.sd) > 100
    assert scaled["ceiling_seeds_needed"] == "never"
    assert roomy["ceiling_seeds_needed"] <= 5 and "ceiling_seeds_needed" not in same
    assert "ceiling_seeds_needed" not in compare(runs, claims[:1], variant_key="optimizer")["attribution > outcome"]
    table = comparison_table(out)
    assert table.splitlines()[0].endswith("| seeds at the reference |")
    assert f"| {bounded['ceiling_seeds_needed']:,} |" in table.splitlines()[2] and "| never |" in table
    _print_claims(out, "locomo")
    printed = capsys.readouterr().out.splitlines()
    needed = bounded["ceiling_seeds_needed"]
    assert f"a run at the reference on every seed would need about {needed} seeds" in printed[0]
    assert "would not beat it on average" in printed[1]
