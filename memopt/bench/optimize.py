"""`memopt bench optimize`: the optimizers side by side at an equal LM-call budget, over seeds.

For each experiment file, each variant — ``memtrace``, ``gepa``, ``gepa_outcome`` (dspy.GEPA with
outcome feedback: question, gold, prediction and F1, no attribution), ``score_only`` and
``blame_response`` (the memtrace optimizer with every failure blamed on the answer op) — runs with
the same budget and rounds, untracked, for ``seeds`` seeds (the experiment's seed, +1, ...; the seed
drives the reflection, the samplers and so the proposals and the selection). The row of a variant
reports test F1 before and after (mean ± sd), the gain (mean ± sd and its 95 % interval), the share
of the catalogue oracle's gain (`memopt.bench.oracle`), the LM calls spent, the gain per 1,000 LM
calls, the wall time and how many distinct runs its seeds gave (seeds that give one run are copies: a claim
between two such variants carries no p-value). Each experiment also gets the reference row (the best subset of
catalogue directives chosen on val, appended to the seed prompts, no optimizer), which is no ceiling: a run can end
above it on test. The target ordering (`CLAIMS`: attribution ahead of
outcome feedback, outcome ahead of the controls) is tested per experiment on the gains, paired by seed
(`memopt.bench.seeds`): a claim "holds" only where it is significant.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memopt.bench.seeds import Claim, compare, comparison_table, distinct_runs, fmt_interval, interval

__all__ = ["bench_optimize", "merge_optimize", "optimize_rows", "markdown_table", "VARIANTS", "CLAIMS",
           "DEFAULT_SEEDS"]

DEFAULT_SEEDS = 5
VARIANTS: dict[str, dict[str, str]] = {
    "memtrace": {"optimizer.name": "memtrace", "optimizer.feedback": "attribution", "attribution.method": "memtrace"},
    "gepa": {"optimizer.name": "gepa", "optimizer.feedback": "attribution", "attribution.method": "memtrace"},
    "gepa_outcome": {"optimizer.name": "gepa", "optimizer.feedback": "outcome"},
    "score_only": {"optimizer.name": "score_only", "optimizer.feedback": "score"},
    "blame_response": {"optimizer.name": "memtrace", "optimizer.feedback": "attribution",
                       "attribution.method": "blame_response"},
}
CLAIMS = (Claim("memtrace", "gepa_outcome"), Claim("gepa", "gepa_outcome"), Claim("memtrace", "score_only"),
          Claim("gepa_outcome", "score_only"), Claim("memtrace", "blame_response"))


def bench_optimize(experiments: list[str | Path], *, budget: int, rounds: int | None = None,
                   variants: list[str] | None = None, seeds: int = DEFAULT_SEEDS, first_seed: int | None = None,
                   on_run: Callable[[dict[str, Any], dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Every variant on every experiment for ``seeds`` seeds from ``first_seed`` (default: each experiment's):
    {budget, seeds, complete, planned, runs, rows, comparisons}. ``on_run(run, report)`` hears each finished run
    with the report of the runs so far (``complete`` false until the last)."""
    from memopt.bench.oracle import catalogue_oracle, share_of_gain
    from memopt.core.errors import ConfigError
    from memopt.optimize.experiment import load_experiment
    from memopt.optimize.loop import run_experiment
    from memopt.tracking import NullTracker

    unknown = sorted(set(variants or []) - set(VARIANTS))
    if unknown:
        raise ConfigError(f"--optimizers: unknown {', '.join(unknown)} (known: {', '.join(VARIANTS)}).")
    names = variants or list(VARIANTS)
    planned = len(experiments) * seeds * len(names)
    runs: list[dict[str, Any]] = []
    oracles: dict[str, dict[str, Any]] = {}
    for path in experiments:
        base = load_experiment(path, {"budget.max_lm_calls": budget, "rounds": rounds, "seed": first_seed})
        started = time.perf_counter()
        oracle = catalogue_oracle(base)
        oracle["seconds"] = round(time.perf_counter() - started, 1)
        oracles[base.name] = oracle
        for offset in range(seeds):
            for name in names:
                experiment = load_experiment(path, {**VARIANTS[name], "budget.max_lm_calls": budget,
                                                    "rounds": rounds, "seed": base.seed + offset})
                started = time.perf_counter()
                summary = run_experiment(experiment, tracker=NullTracker())
                before, after = summary["baseline"]["test_f1"], summary["final"]["test_f1"]
                runs.append({"experiment": base.name, "optimizer": name, "seed": experiment.seed,
                             "test_f1_before": before, "test_f1_after": after, "gain": round(after - before, 4),
                             "share_of_oracle_gain": share_of_gain(before, after, oracle["test_f1"]),
                             "lm_calls": summary["lm_calls"], "rounds": len(summary["rounds"]),
                             "seconds": round(time.perf_counter() - started, 1)})
                if on_run is not None:
                    on_run(runs[-1], _report(budget, rounds, seeds, runs, oracles, names, planned))
    return _report(budget, rounds, seeds, runs, oracles, names, planned)


_RUN_KEYS = ("experiment", "optimizer", "seed", "test_f1_before", "test_f1_after", "gain", "lm_calls", "seconds")


def merge_optimize(reports: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """One report from `bench_optimize` reports by file name (seeds or experiments split over processes): their runs
    together, rows and comparisons computed again, paired by seed as in one bench. The reports must share the budget
    and rounds, score each experiment's oracle alike, and hold no experiment's optimizer at one seed twice;
    otherwise a `ConfigError` names the files."""
    from memopt.bench.seeds import check_same_oracle, collect_runs, field_misfit, planned_runs
    from memopt.core.errors import ConfigError

    runs = collect_runs(reports, command="memopt bench optimize", keys=("budget", "rounds", "oracles", "runs"),
                        same=("budget", "rounds"), run_keys=_RUN_KEYS,
                        identity=lambda r: f"{r['experiment']} {r['optimizer']} at seed {r['seed']}",
                        misfit=lambda r: field_misfit(r, names=_RUN_KEYS[:2], numbers=_RUN_KEYS[2:]))
    head = next(iter(reports.values()))
    oracles: dict[str, dict[str, Any]] = {}
    where: dict[str, str] = {}
    for name, report in reports.items():
        if not isinstance(report["oracles"], dict):
            raise ConfigError(f"{name}: not a `memopt bench optimize --out` report (its oracles are not a mapping).")
        for experiment, oracle in report["oracles"].items():
            check_same_oracle(name, oracle, where.get(experiment, name), oracles.get(experiment))
            oracles.setdefault(experiment, oracle)
            where.setdefault(experiment, name)
    stray = next((r for r in runs if r["experiment"] not in oracles), None)
    if stray is not None:
        raise ConfigError(f"bench merge: runs of {stray['experiment']!r} but no report holds its oracle; pass the "
                          "--out files as `memopt bench optimize` wrote them.")
    names = list(dict.fromkeys(run["optimizer"] for run in runs))
    seeds = len({run["seed"] for run in runs})
    return _report(head["budget"], head["rounds"], seeds, runs, oracles, names, planned_runs(reports))


def _report(budget: int, rounds: int | None, seeds: int, runs: list[dict[str, Any]],
            oracles: dict[str, dict[str, Any]], names: list[str], planned: int) -> dict[str, Any]:
    rows, comparisons = [], {}
    for experiment, oracle in oracles.items():
        mine = [r for r in runs if r["experiment"] == experiment]
        rows += optimize_rows(mine, oracle, names, experiment)
        comparisons[experiment] = compare(mine, CLAIMS, variant_key="optimizer")
    return {"budget": budget, "rounds": rounds, "seeds": seeds, "complete": len(runs) >= planned, "planned": planned,
            "oracles": oracles, "rows": rows, "comparisons": comparisons, "runs": list(runs)}


def optimize_rows(runs: list[dict[str, Any]], oracle: dict[str, Any], names: list[str],
                  experiment: str) -> list[dict[str, Any]]:
    """One row per variant of one experiment (mean, sd and 95 % interval over seeds), then the oracle row."""
    from memopt.bench.oracle import share_of_gain

    rows = []
    for name in names:
        mine = [r for r in runs if r["optimizer"] == name]
        if not mine:
            continue
        before = interval([r["test_f1_before"] for r in mine])["mean"]
        after, gain = interval([r["test_f1_after"] for r in mine]), interval([r["gain"] for r in mine])
        calls = round(statistics.fmean(r["lm_calls"] for r in mine))
        rows.append({"experiment": experiment, "optimizer": name, "seeds": len(mine),
                     "distinct_runs": distinct_runs(mine), "test_f1_before": before,
                     "test_f1_after": after["mean"], "test_f1_after_sd": after["sd"], "gain": gain["mean"],
                     "gain_sd": gain["sd"], "gain_low": gain["low"], "gain_high": gain["high"],
                     "share_of_oracle_gain": share_of_gain(before, after["mean"], oracle["test_f1"]),
                     "lm_calls": calls, "gain_per_1k_calls": round(1000 * gain["mean"] / max(calls, 1), 4),
                     "seconds": round(statistics.fmean(r["seconds"] for r in mine), 1)})
    before = rows[0]["test_f1_before"] if rows else oracle["seed_test_f1"]
    gain = round(oracle["test_f1"] - before, 4)
    above = sum(r["test_f1_after"] > oracle["test_f1"] + 1e-9 for r in runs)
    rows.append({"experiment": experiment, "optimizer": "reference (best subset on val)", "seeds": 1, "above": above,
                 "test_f1_before": before, "test_f1_after": oracle["test_f1"], "test_f1_after_sd": 0.0, "gain": gain,
                 "gain_sd": 0.0, "gain_low": gain, "gain_high": gain, "share_of_oracle_gain": 1.0, "lm_calls": 0,
                 "gain_per_1k_calls": None, "seconds": oracle["seconds"]})
    return rows


def markdown_table(report: dict[str, Any]) -> str:
    """The rows as the Markdown table of docs/benchmarks.md, then each experiment's comparisons."""
    lines = ["| experiment | optimizer | seeds | test F1 before | after (mean ± sd) | gain (mean ± sd) "
             "| 95 % interval of gain | share of reference gain | LM calls | gain per 1k calls |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in report["rows"]:
        share, per_1k = r["share_of_oracle_gain"], r["gain_per_1k_calls"]
        seeds = f"{r['seeds']} (1 distinct result)" if r.get("distinct_runs") == 1 and r["seeds"] > 1 else r["seeds"]
        lines.append(f"| {r['experiment']} | {r['optimizer']} | {seeds} | {r['test_f1_before']:.3f} | "
                     f"{r['test_f1_after']:.3f} ± {r['test_f1_after_sd']:.3f} | {r['gain']:+.3f} ± {r['gain_sd']:.3f} "
                     f"| {fmt_interval(r['gain_low'], r['gain_high'])} | {'—' if share is None else f'{share:.2f}'} "
                     f"| {r['lm_calls']:,} | {'—' if per_1k is None else f'{per_1k:.3f}'} |")
    parts = ["\n".join(lines)]
    for experiment, comparisons in report["comparisons"].items():
        parts.append(f"{experiment}:\n\n{comparison_table(comparisons)}")
    return "\n\n".join(parts)
