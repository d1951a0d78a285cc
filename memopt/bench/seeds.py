"""Runs over seeds, compared the way a sceptic would: mean ± sd, 95 % intervals, paired tests, verdicts.

The benches that run variants over several seeds (`memopt bench feedback`, `memopt bench optimize`) pair
runs by seed and test each claim of their target ordering with `memopt.core.stats.paired_test`. A claim is
one of:

- ``a > b`` (or ``a ≥ 1.5 × b``: ``scale`` 1.5): "holds" when the paired difference ``a − scale × b`` is
  significantly positive (two-sided p < 0.05), "reversed" when significantly negative, else
  "not significant";
- ``a ≈ b``: "holds" when the whole 95 % interval of ``a − b`` lies within ± `EQUIVALENT_WITHIN`
  F1 (an equivalence shown, not merely a difference not found), "differs" when the difference is
  significant, else "not significant".

With one seed nothing is significant, and neither with seeds that do not vary the runs: when every seed gives each
side of a claim the same gain, the seeds are copies as far as the claim can tell (their paired differences have no
variance, and a t-test over them would say p 0), and the claim says "seeds do not vary the runs", with its one
difference and no interval or p-value. `distinct_runs` counts the different results (test F1, the directives the
prompts end with, the knobs) a variant's seeds gave; a row of one distinct result says so.
Every verdict carries its n, the distinct runs of each side, mean difference, sd, interval and p; a
claim "not significant" whose difference points its way also carries ``seeds_needed``: how many paired seeds
would make that difference significant if its mean and sd held (`memopt.core.stats.seeds_needed`; "more than
10000" past that), the figure to declare before a larger run.

Given a ``ceiling`` (the reference's gain: the best directive subset chosen on val, `memopt bench feedback`), each
``a > b`` claim also carries ``ceiling_seeds_needed``: the seeds even a run that scored the reference on every seed
would need against ``b``'s per-seed gains, or ``"never"`` when the reference does not beat ``scale × b`` on average.
A large figure says the claim is bounded by the headroom ``b`` leaves, not by ``a``'s feedback. (The reference is
no ceiling: a run can end above it, on test, with choices val rates lower.)
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memopt.core.stats import MAX_SEEDS_NEEDED, paired_test, seeds_needed, verdict

__all__ = ["Claim", "EQUIVALENT_WITHIN", "COPIES", "interval", "compare", "comparison_table", "distinct_runs",
           "fmt_interval", "needed_text", "ceiling_text", "collect_runs", "planned_runs", "check_same_oracle",
           "field_misfit"]

EQUIVALENT_WITHIN = 0.05
COPIES = "seeds do not vary the runs"
# a run's result: runs alike in all of these are one result, whatever their seeds and the path they took
_RUN_FIELDS = ("test_f1_after", "directives_added", "directives_dropped", "knobs")


@dataclass(frozen=True)
class Claim:
    """One comparison of a target ordering: ``a > b``, ``a ≥ scale × b`` or ``a ≈ b`` (``equivalent``)."""

    a: str
    b: str
    scale: float = 1.0
    equivalent: bool = False

    @property
    def label(self) -> str:
        """The claim as it is printed (``attribution > outcome``)."""
        if self.equivalent:
            return f"{self.a} ≈ {self.b}"
        return f"{self.a} > {self.b}" if self.scale == 1.0 else f"{self.a} ≥ {self.scale:g} × {self.b}"


def interval(values: Sequence[float]) -> dict[str, Any]:
    """Mean, sd and the 95 % t interval of the mean of ``values`` (over seeds), rounded; n."""
    test = paired_test(list(values), [0.0] * len(values))
    out = test.to_dict()
    return {"n": out["n"], "mean": out["mean"], "sd": out["sd"], "low": out["low"], "high": out["high"]}


def distinct_runs(runs: Sequence[dict[str, Any]]) -> int:
    """How many different results ``runs`` have: runs that end at the same test F1, directives and knobs count once."""
    return len({json.dumps({k: r.get(k) for k in _RUN_FIELDS}, sort_keys=True, default=str) for r in runs})


def _by_seed(runs: list[dict[str, Any]], key: str, variant_key: str, name: str) -> dict[int, float]:
    return {r["seed"]: float(r[key]) for r in runs if r[variant_key] == name}


def compare(runs: list[dict[str, Any]], claims: Sequence[Claim], *, key: str = "gain",
            variant_key: str = "variant", ceiling: float | Mapping[int, float] | None = None
            ) -> dict[str, dict[str, Any]]:
    """Each claim tested on ``key`` of the runs, paired by seed: {label: {verdict, n, mean, sd, low, high, t, p}};
    verdict "n/a" when either side has no run; with ``ceiling`` (one, or one per seed), also
    ``ceiling_seeds_needed`` (module docstring)."""
    out: dict[str, dict[str, Any]] = {}
    for claim in claims:
        a, b = _by_seed(runs, key, variant_key, claim.a), _by_seed(runs, key, variant_key, claim.b)
        seeds = sorted(set(a) & set(b))
        if not seeds:
            out[claim.label] = {"verdict": "n/a", "n": 0}
            continue
        test = paired_test([a[s] for s in seeds], [b[s] for s in seeds], scale=claim.scale)
        distinct = {side: distinct_runs([r for r in runs if r[variant_key] == side and r["seed"] in seeds])
                    for side in (claim.a, claim.b)}
        if test.n > 1 and len({a[x] for x in seeds}) == 1 and len({b[x] for x in seeds}) == 1:  # copies: no test
            out[claim.label] = {"verdict": COPIES, "n": test.n, "mean": round(test.mean, 4), "sd": 0.0, "low": None,
                                "high": None, "t": None, "p": None, "seeds": seeds, "seeds_needed": None,
                                "distinct": distinct}
            continue
        if claim.equivalent:
            shown = test.n > 1 and -EQUIVALENT_WITHIN <= test.low <= test.high <= EQUIVALENT_WITHIN
            said = "holds" if shown else "differs" if verdict(test) != "not significant" else "not significant"
        else:
            said = verdict(test)
        needed: int | str | None = None
        if said == "not significant" and test.n > 1 and test.mean > 0 and not claim.equivalent:
            needed = seeds_needed(test.mean, test.sd) or f"more than {MAX_SEEDS_NEEDED}"
        out[claim.label] = {"verdict": said, **test.to_dict(), "seeds": seeds, "seeds_needed": needed,
                            "distinct": distinct}
        if ceiling is not None and not claim.equivalent and test.n > 1:
            at = [ceiling[s] for s in seeds] if isinstance(ceiling, Mapping) else [ceiling] * len(seeds)
            out[claim.label]["ceiling_seeds_needed"] = _at_ceiling(at, [b[s] for s in seeds], claim.scale)
    return out


def _at_ceiling(ceiling: list[float], b: list[float], scale: float) -> int | str:
    """The seeds a run scoring ``ceiling`` (per seed) would need to beat ``scale × b`` (paired), or "never"."""
    at = paired_test(ceiling, b, scale=scale)
    if at.mean <= 0:
        return "never"
    return seeds_needed(at.mean, at.sd) or f"more than {MAX_SEEDS_NEEDED}"


def fmt_interval(low: float | None, high: float | None) -> str:
    """``[low, high]`` with signs, or ``—`` for an unbounded interval (one seed)."""
    if low is None or high is None:
        return "—"
    return f"[{low:+.3f}, {high:+.3f}]"


def needed_text(comparison: dict[str, Any]) -> str:
    """``seeds_needed`` as printed: a count, "more than 10,000", or ``—`` where it does not apply."""
    return _count_text(comparison.get("seeds_needed"))


def ceiling_text(comparison: dict[str, Any]) -> str:
    """``ceiling_seeds_needed`` as printed: a count, "more than 10,000", "never", or ``—`` where it does not apply."""
    return _count_text(comparison.get("ceiling_seeds_needed"))


def _count_text(needed: int | str | None) -> str:
    """A seed count as printed: the count, "more than 10,000" past the limit, "never", or ``—`` for none."""
    if needed is None or needed == "never":
        return needed or "—"
    return f"{needed:,}" if isinstance(needed, int) else f"more than {MAX_SEEDS_NEEDED:,}"


def comparison_table(comparisons: dict[str, dict[str, Any]]) -> str:
    """The comparisons as a Markdown table: claim, mean difference ± sd, 95 % interval, p, verdict, seeds needed
    (and, when a ceiling was given, the seeds a run at the ceiling would need)."""
    ceiling = any("ceiling_seeds_needed" in c for c in comparisons.values())
    extra = (" seeds at the reference |", "---|") if ceiling else ("", "")
    head = "| claim | seeds | difference (mean ± sd) | 95 % interval | p | verdict | seeds it would need |"
    lines = [head + extra[0], "|---|---|---|---|---|---|---|" + extra[1]]
    for label, c in comparisons.items():
        if c["n"] == 0:
            lines.append(f"| {label} | 0 | — | — | — | n/a | — |" + (" — |" if ceiling else ""))
            continue
        p = "—" if c["p"] is None else f"{c['p']:.3f}"
        n = f"{c['n']} (1 distinct result each)" if c["verdict"] == COPIES else str(c["n"])
        lines.append(f"| {label} | {n} | {c['mean']:+.3f} ± {c['sd']:.3f} | {fmt_interval(c['low'], c['high'])}"
                     f" | {p} | {c['verdict']} | {needed_text(c)} |" + (f" {ceiling_text(c)} |" if ceiling else ""))
    return "\n".join(lines)


def collect_runs(reports: dict[str, Any], *, command: str, keys: tuple[str, ...], same: tuple[str, ...],
                 run_keys: tuple[str, ...], identity: Callable[[dict[str, Any]], str],
                 misfit: Callable[[dict[str, Any]], str | None] | None = None) -> list[dict[str, Any]]:
    """The runs of bench reports by file name (``--out`` files of ``command``, for `memopt bench merge`), checked:
    each report a mapping with ``keys``, equal to the first in ``same`` (budget, rounds, ...), each run one with
    ``run_keys`` whose fields ``misfit`` finds nothing wrong with, and no run (named by ``identity``, e.g.
    "attribution at seed 0") in two reports; otherwise a `ConfigError` naming the file."""
    from memopt.core.errors import ConfigError

    if not reports:
        raise ConfigError(f"bench merge: no reports given; pass the --out files of `{command}` runs.")
    for name, report in reports.items():
        missing = [key for key in keys if not isinstance(report, dict) or key not in report]
        if missing:
            raise ConfigError(f"{name}: not a `{command} --out` report (missing {', '.join(missing)}).")
    first, head = next(iter(reports.items()))
    for name, report in reports.items():
        for key in same:
            if report[key] != head[key]:
                raise ConfigError(f"{name}: {key} {report[key]!r}, but {first} has {head[key]!r}; merge reports of "
                                  f"one {', '.join(same)}.")
    seen: dict[str, str] = {}
    runs: list[dict[str, Any]] = []
    for name, report in reports.items():
        for i, run in enumerate(report["runs"] if isinstance(report["runs"], list) else [None]):
            lacking = [k for k in run_keys if k not in run] if isinstance(run, dict) else list(run_keys)
            if lacking:
                raise ConfigError(f"{name}: runs[{i}] is not a bench run (missing {', '.join(lacking)}).")
            if misfit is not None and (wrong := misfit(run)) is not None:
                raise ConfigError(f"{name}: runs[{i}].{wrong}; merge the reports as `{command}` wrote them.")
            key = identity(run)
            if key in seen:
                raise ConfigError(f"{name}: {key} is also in {seen[key]}; give each bench its own seeds "
                                  f"(`{command} --first-seed`).")
            seen[key] = name
            runs.append(run)
    return runs


def planned_runs(reports: dict[str, Any]) -> int:
    """The runs the merged benches planned: each report's ``planned``, else the runs it holds."""
    return sum(r["planned"] if isinstance(r.get("planned"), int) else len(r["runs"]) for r in reports.values())


def check_same_oracle(name: str, oracle: Any, first: str, theirs: Any) -> None:
    """A `ConfigError` unless report ``name``'s oracle scores as ``first``'s does (same data, split and code)."""
    from memopt.core.errors import ConfigError

    if not isinstance(oracle, dict):
        raise ConfigError(f"{name}: its oracle is not a mapping; pass the --out file of a bench run.")
    if not isinstance(theirs, dict):
        return
    if oracle.get("test_f1") != theirs.get("test_f1") or oracle.get("seed_test_f1") != theirs.get("seed_test_f1"):
        raise ConfigError(f"{name}: its oracle or seed prompts score differently from {first}'s (test F1 "
                          f"{oracle.get('test_f1')} against {theirs.get('test_f1')}): not the same data, split or "
                          "code; merge reports measured alike.")


def field_misfit(run: dict[str, Any], *, names: tuple[str, ...], numbers: tuple[str, ...]) -> str | None:
    """The first field of a (hand-edited) bench run a report cannot be computed from, said as ``key: what``:
    ``names`` must be text, ``numbers`` finite numbers (``seed`` an integer); None when all are."""
    for key in names:
        if not isinstance(run[key], str):
            return f"{key}: expected a name, found {run[key]!r:.40}"
    for key in numbers:
        value = run[key]
        if isinstance(value, bool) or not isinstance(value, int if key == "seed" else (int, float)) or \
                not math.isfinite(value):
            return f"{key}: expected {'an integer' if key == 'seed' else 'a number'}, found {value!r:.40}"
    return None

