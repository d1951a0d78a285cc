"""`memopt bench feedback`: one optimizer, one budget, five kinds of feedback, several seeds.

For one experiment, the ``memtrace`` optimizer runs with each registered feedback kind (`memopt.feedback.kinds`:
attribution, outcome, score, empty, misleading, then plug-ins) at the same LM-call budget and number of rounds,
untracked, for ``seeds`` seeds (the experiment's seed, +1, +2, ...). The seed drives SimLM's
reflection (which candidates it writes), Optuna's sampler and therefore the proposals and the
selection; the data, its split and what the task and judge LMs do are the same for every seed.
attribution, misleading and empty rewrite memopt's blamed ops; outcome and score, having no
attribution, take the LLM ops round-robin (see `memopt.optimize.reflective`). The format controls
(``attribution_prose``, ``attribution_json``, ...: memopt's attribution examples written in another format,
`memopt.feedback.formats`) run only when named in ``variants``.

With ``resplit`` each seed also splits the data its own way (``data.split_seed`` = the seed), so the kinds are
compared over splits of the data as well as over the optimizer's randomness: one fixed split can reward, on test,
choices its val rates lower (docs/optimize.md, "What the targets need"). The oracle is then chosen per split, each
run is reported against its split's oracle, and the oracle row is the mean of the seeds' oracles.

Each row: test F1 before and after (mean ± sd over seeds), the gain (mean ± sd and its 95 % t
interval), the share of the reference's gain (the catalogue oracle, `memopt.bench.oracle`: the best directive subset
chosen on val, which is no ceiling: a run can end above it on test, and the row says how many do), LM calls and
seconds per run, and how many distinct runs its seeds gave (seeds that give one run are copies, not evidence: the
claims then carry no p-value); plus the reference row. `merge_experiments` and `summary_table` put every experiment's
reports in one table. Each claim of the target ordering (attribution > outcome > score ≈ empty
> misleading, and attribution's gain ≥ 1.5 × outcome's) is a paired t-test on the gains, paired by
seed (`memopt.bench.seeds`): it "holds" only where the difference is significant (p < 0.05),
otherwise the table and the JSON say "not significant". Each run also records the catalogue directives its
final prompts add to the seed's (and drop), as SimLM reads them (`directive_changes`), counted per kind
(`directive_counts`): where kinds' runs part, without reading their prompts.
"""

from __future__ import annotations

import json
import statistics
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memopt.bench.seeds import Claim, compare, comparison_table, distinct_runs, fmt_interval, interval

if TYPE_CHECKING:
    from memopt.optimize.experiment import Experiment
    from memopt.systems.base import MemorySystem

__all__ = ["bench_feedback", "merge_feedback", "merge_experiments", "default_variants", "feedback_rows", "ordering",
           "markdown_table", "summary_table", "directive_changes", "directive_counts", "CLAIMS", "DEFAULT_SEEDS",
           "REFERENCE"]


REFERENCE = "reference"
CLAIMS = (Claim("attribution", "outcome"), Claim("outcome", "score"), Claim("outcome", "empty"),
          Claim("score", "empty", equivalent=True), Claim("score", "misleading"), Claim("empty", "misleading"),
          Claim("attribution", "outcome", scale=1.5))
DEFAULT_SEEDS = 5


def bench_feedback(experiment: str | Path, *, budget: int, seeds: int = DEFAULT_SEEDS, rounds: int | None = None,
                   variants: list[str] | None = None, first_seed: int | None = None, resplit: bool = False,
                   on_run: Callable[[dict[str, Any], dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Run every feedback kind for ``seeds`` seeds from ``first_seed`` (default: the experiment's), each on its own
    split of the data with ``resplit``; returns runs, rows, the oracle(s) and the ordering verdicts.
    ``on_run(run, report)`` hears each finished run with the report of the runs so far (``complete`` false until
    the last)."""
    from memopt.bench.oracle import share_of_gain
    from memopt.core.errors import ConfigError
    from memopt.feedback.kinds import kind_names
    from memopt.optimize.experiment import load_experiment
    from memopt.optimize.loop import run_experiment
    from memopt.systems import make_system
    from memopt.tracking import NullTracker

    known = kind_names()
    names = list(variants or default_variants())
    unknown = sorted(set(names) - set(known))
    if unknown:
        raise ConfigError(f"--variants: unknown feedback {', '.join(unknown)} (known: {', '.join(known)}).")
    base = load_experiment(experiment, {"budget.max_lm_calls": budget, "rounds": rounds, "seed": first_seed})
    seed_system = make_system(base.pipeline, prompts=base.prompts, **base.knobs)
    oracles = _Oracles()
    oracle: dict[str, Any] = {} if resplit else oracles.of(base)
    runs = []
    for offset in range(seeds):
        split = {"data.split_seed": base.seed + offset} if resplit else {}
        for name in names:
            exp = load_experiment(experiment, {"optimizer.name": "memtrace", "optimizer.feedback": name,
                                               "budget.max_lm_calls": budget, "rounds": rounds,
                                               "seed": base.seed + offset, **split})
            mine = oracles.of(exp) if resplit else oracle
            started = time.perf_counter()
            best = _Best()
            summary = run_experiment(exp, tracker=NullTracker(), observers=[best])
            before, after = summary["baseline"]["test_f1"], summary["final"]["test_f1"]
            added, dropped = directive_changes(seed_system, best.instructions)
            runs.append({"variant": name, "seed": exp.seed, "test_f1_before": before, "test_f1_after": after,
                         "gain": round(after - before, 4), "share": share_of_gain(before, after, mine["test_f1"]),
                         "lm_calls": summary["lm_calls"], "rounds": len(summary["rounds"]),
                         "attribution_judge_calls": sum(r.get("attribution", {}).get("judge_calls", 0)
                                                        for r in summary["rounds"]),
                         "stopped": summary.get("stopped"), "knobs": summary.get("best_knobs", {}),
                         "directives_added": added, "directives_dropped": dropped,
                         "seconds": round(time.perf_counter() - started, 1),
                         **({"split_seed": exp.data.split_seed, "oracle_test_f1": mine["test_f1"]} if resplit else {})})
            if on_run is not None:
                on_run(runs[-1], _report(base.name, budget, base.rounds, oracle, runs, names, seeds * len(names),
                                         split_oracles=oracles.by_split_seed if resplit else None))
    return _report(base.name, budget, base.rounds, oracle, runs, names, seeds * len(names),
                   split_oracles=oracles.by_split_seed if resplit else None)


class _Oracles:
    """The catalogue oracle of each split of the data (which conversations are in train, val and test), computed
    once per split: split seeds may split alike."""

    def __init__(self) -> None:
        self.by_split: dict[tuple[tuple[str, ...], ...], dict[str, Any]] = {}
        self.by_split_seed: dict[str, dict[str, Any]] = {}

    def of(self, experiment: Experiment) -> dict[str, Any]:
        """The oracle of ``experiment``'s split (its data, ``data.split`` and ``data.split_seed``)."""
        from memopt.bench.oracle import catalogue_oracle
        from memopt.optimize.loop import splits_of

        parts = tuple(tuple(sorted(c.sample_id for c in part)) for part in splits_of(experiment)[1:])
        if parts not in self.by_split:
            started = time.perf_counter()
            self.by_split[parts] = catalogue_oracle(experiment)
            self.by_split[parts]["seconds"] = round(time.perf_counter() - started, 1)
            self.by_split[parts]["split"] = dict(zip(("train", "val", "test"), map(list, parts), strict=True))
        self.by_split_seed[str(experiment.data.split_seed)] = self.by_split[parts]
        return self.by_split[parts]


def _report(experiment: str, budget: int, rounds: int, oracle: dict[str, Any] | None, runs: list[dict[str, Any]],
            names: list[str], planned: int, split_oracles: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """The report of ``runs`` against the experiment's ``oracle``, or (``resplit``) each against its split's, of
    ``split_oracles`` by split seed."""
    if split_oracles is not None:
        oracle = _mean_oracle(runs, split_oracles)
    rows = feedback_rows(runs, oracle, names)
    ceiling: float | dict[int, float] | None = next((r["gain"] for r in rows if r["variant"] == REFERENCE), None)
    if split_oracles is not None:
        ceiling = {r["seed"]: r["oracle_test_f1"] - r["test_f1_before"] for r in runs}
    return {"experiment": experiment, "budget": budget, "rounds": rounds,
            "seeds": sorted({r["seed"] for r in runs}), "complete": len(runs) >= planned, "planned": planned,
            **({"resplit": True, "split_oracles": split_oracles} if split_oracles is not None else {}),
            "oracle": oracle, "rows": rows, "ordering": ordering(runs, ceiling=ceiling),
            "directives": directive_counts(runs, names), "runs": list(runs)}


def _mean_oracle(runs: list[dict[str, Any]], split_oracles: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """With ``resplit``: the oracle's and the seed prompts' test F1, each the mean over the seeds' splits, and the
    seconds one split's oracle took on average."""
    by_seed = {r["seed"]: (r["oracle_test_f1"], r["test_f1_before"]) for r in runs}
    means = [round(statistics.fmean(v[i] for v in by_seed.values()), 4) if by_seed else None for i in (0, 1)]
    searched = {json.dumps(o.get("split"), sort_keys=True): o.get("seconds", 0.0) for o in split_oracles.values()}
    return {"test_f1": means[0], "seed_test_f1": means[1], "per_split": True,
            "seconds": round(statistics.fmean(searched.values()), 1) if searched else 0.0}


_RUN_KEYS = ("variant", "seed", "test_f1_before", "test_f1_after", "gain", "lm_calls", "seconds")


def _misfit(run: dict[str, Any]) -> str | None:
    """The first field of a (hand-edited) bench run that the report cannot be computed from, said as ``key: what``."""
    from memopt.bench.seeds import field_misfit

    if (misfit := field_misfit(run, names=("variant",), numbers=_RUN_KEYS[1:])) is not None:
        return misfit
    for key in ("directives_added", "directives_dropped"):
        value = run.get(key, {})
        if not isinstance(value, dict) or not all(isinstance(ids, list) for ids in value.values()):
            return f"{key}: expected a mapping of op to a list of directives, found {value!r:.40}"
    return None


def merge_feedback(reports: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """One report from bench reports by file name (`bench_feedback`, e.g. seeds split over processes): their runs
    together, rows, verdicts and directive counts computed again, paired by seed as in one bench.

    The reports must be of one experiment, budget, rounds and oracle (the same data and split; with ``--resplit``,
    the same oracle for each split seed they share), and no kind's seed may be in two of them; otherwise a
    `ConfigError` names the files. An interrupted bench's report (``complete`` false: ``--out`` is written after
    every run) adds the runs it finished."""
    from memopt.bench.seeds import check_same_oracle, collect_runs, planned_runs
    from memopt.core.errors import ConfigError

    runs = collect_runs(reports, command="memopt bench feedback",
                        keys=("experiment", "budget", "rounds", "oracle", "runs"),
                        same=("experiment", "budget", "rounds"), run_keys=_RUN_KEYS,
                        identity=lambda run: f"{run['variant']} at seed {run['seed']}", misfit=_misfit)
    first, head = next(iter(reports)), next(iter(reports.values()))
    names = list(dict.fromkeys(run["variant"] for run in runs))
    resplit = {name: bool(report.get("resplit")) for name, report in reports.items()}
    if len(set(resplit.values())) > 1:
        one, other = (next(name for name, r in resplit.items() if r is flag) for flag in (True, False))
        raise ConfigError(f"bench merge: {one} splits the data per seed (--resplit) and {other} does not; merge "
                          "reports of one kind of split.")
    split_oracles = _merge_split_oracles(reports) if head.get("resplit") else None
    if split_oracles is None:
        for name, report in reports.items():
            check_same_oracle(name, report["oracle"], first, head["oracle"])
    return _report(head["experiment"], head["budget"], head["rounds"], head["oracle"], runs, names,
                   planned_runs(reports), split_oracles=split_oracles)


def _merge_split_oracles(reports: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The split oracles of ``resplit`` reports, one per split seed; a split seed's oracle must score alike in every
    report that has it."""
    from memopt.bench.seeds import check_same_oracle, field_misfit
    from memopt.core.errors import ConfigError

    merged: dict[str, dict[str, Any]] = {}
    where: dict[str, str] = {}
    for name, report in reports.items():
        oracles = report.get("split_oracles")
        if not isinstance(oracles, dict):
            raise ConfigError(f"{name}: split_oracles is not a mapping of split seed to oracle; merge the reports as "
                              "`memopt bench feedback --resplit` wrote them.")
        for seed, oracle in oracles.items():
            if seed in merged:
                check_same_oracle(name, oracle, where[seed], merged[seed])
            else:
                merged[seed], where[seed] = oracle, name
    for name, report in reports.items():
        for i, run in enumerate(report["runs"]):
            if str(run.get("split_seed")) not in merged or "oracle_test_f1" not in run or \
                    field_misfit(run, names=(), numbers=("oracle_test_f1",)) is not None:
                raise ConfigError(f"{name}: runs[{i}] has no split oracle (split_seed, oracle_test_f1); merge the "
                                  "reports as `memopt bench feedback --resplit` wrote them.")
    return merged


class _Best:
    """Hears a run's best prompts (`memopt.optimize.events.BestChanged`): the prompts the run ends with."""

    def __init__(self) -> None:
        self.instructions: dict[str, str] = {}

    def on_event(self, event: Any) -> None:
        """Keep the prompts of the latest best round."""
        if getattr(event, "kind", None) == "best_changed":
            self.instructions = dict(event.instructions)


def directive_changes(seed_system: MemorySystem, instructions: dict[str, str]
                      ) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """The catalogue directives SimLM reads in ``instructions`` that the seed prompts lack (added), and those the
    seed grants that they no longer do (dropped), by op; ops without a change are left out."""
    from memopt.bench.oracle import directives_on

    start = directives_on(seed_system)
    end = directives_on(seed_system.with_instructions(instructions)) if instructions else start
    added = {op: [d for d in ids if d not in start.get(op, ())] for op, ids in end.items()}
    dropped = {op: [d for d in ids if d not in end.get(op, ())] for op, ids in start.items()}
    return ({op: ids for op, ids in added.items() if ids}, {op: ids for op, ids in dropped.items() if ids})


def directive_counts(runs: list[dict[str, Any]], names: list[str]) -> dict[str, dict[str, Any]]:
    """Per feedback kind: its runs, and how many of them added (and dropped) each directive, as ``op.directive``,
    most frequent first: what each kind of feedback led the optimizer to."""
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        mine = [r for r in runs if r["variant"] == name]
        if not mine:
            continue
        counts = {}
        for key in ("directives_added", "directives_dropped"):
            tally = Counter(f"{op}.{d}" for r in mine for op, ids in r.get(key, {}).items() for d in ids)
            counts[key.removeprefix("directives_")] = dict(sorted(tally.items(), key=lambda kv: (-kv[1], kv[0])))
        out[name] = {"runs": len(mine), **counts}
    return out


def default_variants() -> list[str]:
    """Every registered feedback kind but the format controls (``attribution_prose``, ...: run when asked)."""
    from memopt.feedback.kinds import get_kind, kind_names

    return [name for name in kind_names() if get_kind(name).rendering_of is None]


def feedback_rows(runs: list[dict[str, Any]], oracle: dict[str, Any], names: list[str]) -> list[dict[str, Any]]:
    """One row per feedback kind (mean, sd and 95 % interval over seeds), then the oracle row; runs of a ``resplit``
    bench (each with its split's ``oracle_test_f1``) are measured against their own splits' oracles."""
    from memopt.bench.oracle import share_of_gain

    rows = []
    for name in names:
        mine = [r for r in runs if r["variant"] == name]
        if not mine:
            continue
        before = interval([r["test_f1_before"] for r in mine])["mean"]
        after, gain = interval([r["test_f1_after"] for r in mine]), interval([r["gain"] for r in mine])
        ceiling = statistics.fmean(r["oracle_test_f1"] for r in mine) if oracle.get("per_split") else oracle["test_f1"]
        rows.append({"variant": name, "ops": "blamed" if _uses_attribution(name) else "round-robin",
                     "distinct_runs": distinct_runs(mine), "test_f1_before": before, "test_f1_after": after["mean"],
                     "test_f1_after_sd": after["sd"], "gain": gain["mean"], "gain_sd": gain["sd"],
                     "gain_low": gain["low"], "gain_high": gain["high"],
                     "share_of_oracle_gain": share_of_gain(before, after["mean"], ceiling),
                     "lm_calls": round(statistics.fmean(r["lm_calls"] for r in mine)),
                     "seconds": round(statistics.fmean(r["seconds"] for r in mine), 1), "runs": len(mine)})
    if oracle.get("per_split"):
        return [*rows, *_split_oracle_row(runs, oracle.get("seconds", 0.0))]
    before = rows[0]["test_f1_before"] if rows else oracle.get("seed_test_f1")
    gain = round(oracle["test_f1"] - before, 4) if before is not None else None
    above = sum(r["test_f1_after"] > oracle["test_f1"] + 1e-9 for r in runs)
    rows.append({"variant": REFERENCE, "ops": f"best directive subset chosen on val, no optimizer; {above} of "
                 f"{len(runs)} runs end above it", "above": above, "test_f1_before": before,
                 "test_f1_after": oracle["test_f1"], "test_f1_after_sd": 0.0, "gain": gain, "gain_sd": 0.0,
                 "gain_low": gain, "gain_high": gain, "share_of_oracle_gain": 1.0, "lm_calls": 0,
                 "seconds": oracle.get("seconds", 0.0), "runs": 1})
    return rows


def _split_oracle_row(runs: list[dict[str, Any]], seconds: float) -> list[dict[str, Any]]:
    """The oracle row of a ``resplit`` bench: each seed's split's oracle, mean ± sd and interval over the seeds."""
    by_seed = {r["seed"]: (r["test_f1_before"], r["oracle_test_f1"]) for r in runs}
    if not by_seed:
        return []
    before = interval([b for b, _ in by_seed.values()])["mean"]
    after, gain = interval([o for _, o in by_seed.values()]), interval([o - b for b, o in by_seed.values()])
    above = sum(r["test_f1_after"] > r["oracle_test_f1"] + 1e-9 for r in runs)
    return [{"variant": REFERENCE, "ops": f"best directive subset of each split chosen on its val, no optimizer; "
             f"{above} of {len(runs)} runs end above their split's", "above": above, "test_f1_before": before,
             "test_f1_after": after["mean"], "test_f1_after_sd": after["sd"], "gain": gain["mean"],
             "gain_sd": gain["sd"], "gain_low": gain["low"], "gain_high": gain["high"], "share_of_oracle_gain": 1.0,
             "lm_calls": 0, "seconds": seconds, "runs": len(by_seed)}]


def _uses_attribution(name: str) -> bool:
    from memopt.feedback.kinds import get_kind

    return get_kind(name).uses_attribution


def ordering(runs: list[dict[str, Any]], *, ceiling: float | dict[int, float] | None = None
             ) -> dict[str, dict[str, Any]]:
    """Each claim of the target ordering (`CLAIMS`: attribution > outcome > score ≈ empty > misleading, attribution
    ≥ 1.5 × outcome), and each rendering of attribution (``attribution_<name>``) > outcome, tested on the gains,
    paired by seed (`memopt.bench.seeds.compare`): a verdict, "holds" only where it is significant; with the
    reference's gain as ``ceiling``, the seeds a run at the reference would need."""
    rendered = sorted({r["variant"] for r in runs if r["variant"].startswith("attribution_")})
    return compare(runs, [*CLAIMS, *(Claim(name, "outcome") for name in rendered)], ceiling=ceiling)


def markdown_table(report: dict[str, Any]) -> str:
    """The rows as the Markdown table of docs/benchmarks.md, then the comparisons (difference, interval, p, verdict)."""
    lines = ["| experiment | budget | seeds | feedback | ops rewritten | test F1 before | after (mean ± sd) "
             "| gain (mean ± sd) | 95 % interval of gain | share of reference gain | LM calls | s / run |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in report["rows"]:
        share = row["share_of_oracle_gain"]
        seeds = f"{len(report['seeds'])}" + (" (1 distinct result)" if row.get("distinct_runs") == 1 and
                                             len(report["seeds"]) > 1 else "")
        lines.append(f"| {report['experiment']} | {report['budget']:,} | {seeds} | {row['variant']} | "
                     f"{row['ops']} | {row['test_f1_before']:.3f} | "
                     f"{row['test_f1_after']:.3f} ± {row['test_f1_after_sd']:.3f} | "
                     f"{row['gain']:+.3f} ± {row['gain_sd']:.3f} | "
                     f"{fmt_interval(row.get('gain_low'), row.get('gain_high'))} | "
                     f"{'—' if share is None else f'{share:.2f}'} | {row['lm_calls']:,} | {row['seconds']} |")
    return "\n".join(lines) + "\n\n" + comparison_table(report["ordering"])


def merge_experiments(reports: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Bench reports by file name, merged per experiment (`merge_feedback` on each experiment's reports)."""
    groups: dict[str, dict[str, dict[str, Any]]] = {}
    for name, report in reports.items():
        groups.setdefault(str(report.get("experiment")), {})[name] = report
    return {experiment: merge_feedback(group) for experiment, group in groups.items()}


def _summary_gain(rows: dict[str, dict[str, Any]], name: str) -> str:
    row = rows.get(name)
    if row is None:
        return "—"
    copies = " (1 distinct result)" if row.get("distinct_runs") == 1 and row["runs"] > 1 else ""
    return f"{row['gain']:+.3f} ± {row['gain_sd']:.3f}{copies}"


def _summary_claim(report: dict[str, Any], label: str) -> str:
    c = report["ordering"].get(label, {"n": 0})
    if c["n"] == 0:
        return "—"
    p = "no p-value" if c["p"] is None else f"p {c['p']:.3f}"
    return f"{c['mean']:+.3f}, {fmt_interval(c['low'], c['high'])}, {p}: {c['verdict']}"


def summary_table(reports: dict[str, dict[str, Any]]) -> str:
    """One row per experiment (merged reports by experiment): seeds, attribution's and outcome's gains, the
    reference's, and the claim attribution > outcome with its p; seeds that do not vary the runs are said so."""
    lines = ["| experiment | budget | seeds | attribution | outcome | reference (best subset on val) | runs above the "
             "reference | attribution > outcome | attribution ≥ 1.5 × outcome |",
             "|---|---|---|---|---|---|---|---|---|"]
    for experiment, report in reports.items():
        rows = {r["variant"]: r for r in report["rows"]}
        ref = rows.get(REFERENCE, {})
        lines.append(f"| {experiment} | {report['budget']:,} | {len(report['seeds'])} | "
                     f"{_summary_gain(rows, 'attribution')} | {_summary_gain(rows, 'outcome')} | "
                     f"{ref.get('gain', 0):+.3f} | {ref.get('above', '—')} of {len(report['runs'])} | "
                     f"{_summary_claim(report, 'attribution > outcome')} | "
                     f"{_summary_claim(report, 'attribution ≥ 1.5 × outcome')} |")
    return "\n".join(lines)
