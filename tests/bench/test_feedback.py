"""`memopt bench feedback` end to end on a tiny experiment, and the catalogue oracle it reports against."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from memopt.bench.feedback import default_variants, feedback_rows, markdown_table, ordering
from memopt.bench.oracle import oracle_instructions, share_of_gain
from memopt.optimize.experiment import load_experiment
from memopt.simlm.directives import active_directives, directives_for
from tests.conftest import ROOT

QUICKSTART = ROOT / "experiments" / "quickstart.yaml"
VARIANTS = ("attribution", "outcome", "score", "empty", "misleading")  # memopt's kinds, in the registry's order


@pytest.mark.slow  # a full optimization (CI runs it with -m slow)
def test_bench_feedback_runs_every_kind_and_writes_the_oracle_row(tmp_path):
    tiny = tmp_path / "tiny.yaml"
    tiny.write_text(QUICKSTART.read_text().replace("conversations=12,sessions=8", "conversations=4,sessions=3"))
    done = subprocess.run([sys.executable, "-m", "memopt", "bench", "feedback", "--experiment", str(tiny),
                           "--budget", "300", "--seeds", "1", "--rounds", "1", "--markdown", "--out", "bench.json"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((tmp_path / "bench.json").read_text())
    rows = {row["variant"]: row for row in report["rows"]}
    assert list(rows) == [*VARIANTS, "reference"] and len(report["runs"]) == len(VARIANTS)
    assert report["complete"] is True and report["planned"] == len(VARIANTS)
    assert [line.split(":")[0] for line in done.stderr.splitlines() if line.startswith("[")] == \
        [f"[{i}/{len(VARIANTS)}] {name} seed 0" for i, name in enumerate(VARIANTS, start=1)]
    oracle = rows["reference"]
    assert oracle["test_f1_after"] == report["oracle"]["test_f1"] > oracle["test_f1_before"]
    assert oracle["share_of_oracle_gain"] == 1.0 and oracle["lm_calls"] == 0
    for name in VARIANTS:
        row = rows[name]
        assert row["test_f1_before"] == oracle["test_f1_before"] and row["runs"] == 1
        assert row["share_of_oracle_gain"] == share_of_gain(row["test_f1_before"], row["test_f1_after"],
                                                             oracle["test_f1_after"])
        assert 0 < row["lm_calls"] <= 300 * 1.5
    assert report["ordering"] == json.loads(json.dumps(ordering(report["runs"])))
    assert {c["verdict"] for c in report["ordering"].values()} == {"not significant"}  # one seed: no claim stated
    assert "| quickstart | 300 | 1 | reference |" in done.stdout and "attribution > outcome:" in done.stdout
    # Which directives each run ended with, as SimLM reads its final prompts: test F1 follows them and the knobs.
    from memopt.systems import make_system

    missing = {op: set(ids) for op, ids in report["oracle"]["all_on"]["directives"].items()}
    seed_knobs = make_system("mem0").knobs
    for run in report["runs"]:
        assert all(set(ids) <= missing[op] for op, ids in run["directives_added"].items()), run
        if run["test_f1_after"] != run["test_f1_before"] and run["knobs"] == seed_knobs:
            assert run["directives_added"] or run["directives_dropped"], run
        assert f"\n  {run['variant']}: " in done.stdout
    assert set(report["directives"]) == set(VARIANTS) and "the directives each kind's runs ended with" in done.stdout


def test_oracle_appends_every_catalogue_directive_of_each_llm_op():
    from memopt.systems import make_system

    for pipeline, kinds in (("mem0", {"extract": "extract", "update": "update", "answer": "answer"}),
                            ("evermemos", {"facts": "extract", "episode": "summarize", "answer": "answer"})):
        system = make_system(pipeline)
        seed, oracle = system.instructions(), oracle_instructions(system)
        for op, kind in kinds.items():
            assert oracle[op].startswith(seed[op].rstrip())
            assert active_directives(kind, oracle[op]) == {d.id for d in directives_for(kind)}, (pipeline, op)
        untouched = {op for op in seed if op not in kinds}  # evermemos' segment and profile: no directive
        assert all(oracle[op] == seed[op] for op in untouched)


def test_directive_changes_read_what_the_final_prompts_added_and_dropped():
    from memopt.bench.feedback import directive_changes, directive_counts
    from memopt.bench.oracle import missing_directives, subset_instructions
    from memopt.systems import make_system

    seed = make_system("mem0")
    missing = missing_directives(seed)
    extract, update = missing["extract"][:2], missing["update"][:1]
    tuned = subset_instructions(seed, {"extract": extract, "update": update})
    assert directive_changes(seed, tuned) == ({"extract": list(extract), "update": list(update)}, {})
    assert directive_changes(seed, {}) == ({}, {})  # a run that kept the seed prompts
    # From a seed that grants them, the seed's own prompts drop what it granted, and keep the rest.
    granted = seed.with_instructions(tuned)
    assert directive_changes(granted, seed.instructions()) == ({}, {"extract": list(extract), "update": list(update)})
    runs = [{"variant": "attribution", "directives_added": {"extract": list(extract)}, "directives_dropped": {}},
            {"variant": "attribution", "directives_added": {"extract": [extract[0]]},
             "directives_dropped": {"update": list(update)}},
            {"variant": "outcome", "directives_added": {}, "directives_dropped": {}}]
    counts = directive_counts(runs, ["attribution", "outcome", "score"])
    assert counts == {"attribution": {"runs": 2, "added": {f"extract.{extract[0]}": 2, f"extract.{extract[1]}": 1},
                                      "dropped": {f"update.{update[0]}": 1}},
                      "outcome": {"runs": 1, "added": {}, "dropped": {}}}


def _runs(gains: dict[str, list[float]]) -> list[dict]:
    return [{"variant": v, "seed": seed, "gain": g, "test_f1_before": 0.2, "test_f1_after": 0.2 + g, "lm_calls": 100,
             "seconds": 1.0} for v, values in gains.items() for seed, g in enumerate(values)]


def test_share_of_gain_and_ordering_verdicts_paired_by_seed():
    assert share_of_gain(0.2, 0.5, 0.8) == 0.5 and share_of_gain(0.2, 0.5, 0.2) is None
    gains = {"attribution": [0.50, 0.52, 0.48, 0.51, 0.49], "outcome": [0.30, 0.31, 0.28, 0.32, 0.29],
             "score": [0.10, 0.12, 0.11, 0.10, 0.11], "empty": [0.11, 0.11, 0.10, 0.12, 0.10],
             "misleading": [0.02, 0.03, 0.01, 0.02, 0.03]}
    verdicts = ordering(_runs(gains))
    assert {claim: v["verdict"] for claim, v in verdicts.items()} == {
        "attribution > outcome": "holds", "outcome > score": "holds", "outcome > empty": "holds",
        "score ≈ empty": "holds", "score > misleading": "holds", "empty > misleading": "holds",
        "attribution ≥ 1.5 × outcome": "holds"}
    assert verdicts["attribution > outcome"]["n"] == 5 and verdicts["attribution > outcome"]["p"] < 0.001
    # attribution's mean gain is still ahead, but inside the seeds' noise: the ordering is not stated
    gains["attribution"] = [0.45, 0.20, 0.40, 0.25, 0.38]
    noisy = ordering(_runs(gains))
    assert noisy["attribution > outcome"]["verdict"] == "not significant"
    assert noisy["attribution > outcome"]["low"] < 0 < noisy["attribution > outcome"]["high"]
    assert noisy["attribution ≥ 1.5 × outcome"]["verdict"] == "not significant"  # 0.336 vs 1.5 × 0.30: p 0.11
    # pairing by seed: the same gains in another seed order are another comparison
    gains["attribution"] = [0.31, 0.32, 0.29, 0.33, 0.30]  # outcome + 0.01 at every seed
    assert ordering(_runs(gains))["attribution > outcome"]["verdict"] == "holds"
    gains["attribution"] = [0.33, 0.30, 0.32, 0.29, 0.31]  # the same values, not paired with outcome's
    assert ordering(_runs(gains))["attribution > outcome"]["verdict"] == "not significant"
    # one seed: nothing is significant, and the table says so
    one = {v: g[:1] for v, g in gains.items()}
    assert {v["verdict"] for v in ordering(_runs(one)).values()} == {"not significant"}
    assert load_experiment(QUICKSTART).optimizer.search  # the oracle chooses among these knob values on val


def test_markdown_table_shows_mean_sd_interval_and_verdicts():
    gains = {"attribution": [0.35, 0.30, 0.40], "outcome": [0.25, 0.34, 0.20]}
    runs = _runs(gains)
    rows = feedback_rows(runs, {"test_f1": 0.7, "seconds": 1.0}, ["attribution", "outcome"])
    report = {"experiment": "quickstart", "budget": 6000, "seeds": [0, 1, 2], "rows": rows, "ordering": ordering(runs)}
    table = markdown_table(report)
    # attribution: mean 0.35, sd 0.05, 95 % interval 0.35 ± t(0.975, 2) × 0.05 / √3 = 0.35 ± 0.124
    assert "| quickstart | 6,000 | 3 | attribution | blamed | 0.200 | 0.550 ± 0.050 | +0.350 ± 0.050 " \
           "| [+0.226, +0.474] |" in table
    # differences 0.10, −0.04, 0.20: mean 0.087, sd 0.121, 0.087 ± 4.303 × 0.121 / √3; t 1.24, p 0.34
    assert "| attribution > outcome | 3 | +0.087 ± 0.121 | [-0.213, +0.386] | 0.339 | not significant |" in table
    assert "| not significant |" in table and "| score ≈ empty | 0 | — | — | — | n/a |" in table


def test_the_format_controls_run_only_when_asked():
    from memopt.feedback.kinds import kind_names

    assert default_variants() == list(VARIANTS)
    formats = {f"attribution_{f}" for f in ("prose", "qa", "json", "table", "bullets", "yaml", "intl")}
    assert formats <= set(kind_names()) and not formats & set(default_variants())


@pytest.mark.slow  # over 4 s on a quiet machine (CI runs it with -m slow)
def test_a_bench_run_reports_the_directives_its_final_prompts_added(tmp_path):
    from memopt.bench.feedback import bench_feedback

    tiny = tmp_path / "tiny.yaml"
    tiny.write_text(QUICKSTART.read_text().replace("conversations=12,sessions=8", "conversations=4,sessions=3"))
    report = bench_feedback(tiny, budget=3000, seeds=1, rounds=2, variants=["attribution"], first_seed=7)
    (run,) = report["runs"]
    assert run["seed"] == 7 and report["seeds"] == [7]  # --first-seed: another process's share of the seeds
    assert run["test_f1_after"] > run["test_f1_before"]  # SimLM's F1 moves only with directives and knobs
    missing = {op: set(ids) for op, ids in report["oracle"]["all_on"]["directives"].items()}
    assert run["directives_added"] and run["directives_dropped"] == {}
    assert all(set(ids) <= missing[op] for op, ids in run["directives_added"].items())
    assert report["directives"]["attribution"] == {
        "runs": 1, "added": {f"{op}.{d}": 1 for op, ids in sorted(run["directives_added"].items()) for d in ids},
        "dropped": {}}


def _report(runs: list[dict], **changes) -> dict:
    oracle = {"test_f1": 0.7, "seed_test_f1": 0.2, "seconds": 1.0}
    return {"experiment": "quickstart", "budget": 6000, "rounds": 8, "oracle": oracle, "runs": runs} | changes


def test_bench_merge_pairs_the_seeds_of_reports_run_apart(tmp_path):
    from memopt.bench.feedback import merge_feedback
    from memopt.core.errors import ConfigError

    gains = {"attribution": [0.35, 0.30, 0.40, 0.36, 0.33, 0.38], "outcome": [0.25, 0.24, 0.20, 0.27, 0.22, 0.21]}
    runs = _runs(gains)
    low, high = [r for r in runs if r["seed"] < 3], [r for r in runs if r["seed"] >= 3]
    merged = merge_feedback({"a.json": _report(low), "b.json": _report(high)})
    assert merged["seeds"] == [0, 1, 2, 3, 4, 5] and merged["ordering"] == ordering(runs, ceiling=0.5)
    assert merged["ordering"]["attribution > outcome"]["n"] == 6  # one seed's runs of two kinds are one pair
    assert [r["runs"] for r in merged["rows"]] == [6, 6, 1]
    with pytest.raises(ConfigError, match=r"b.json: attribution at seed 0 is also in a.json; .*--first-seed"):
        merge_feedback({"a.json": _report(low), "b.json": _report(low[:1] + low[2:3])})
    with pytest.raises(ConfigError, match=r"b.json: budget 20000, but a.json has 6000"):
        merge_feedback({"a.json": _report(low), "b.json": _report(high, budget=20000)})
    with pytest.raises(ConfigError, match=r"b.json: its oracle or seed prompts score differently"):
        merge_feedback({"a.json": _report(low), "b.json": _report(high, oracle={"test_f1": 0.6})})
    with pytest.raises(ConfigError, match=r"a.json: runs\[0\] is not a bench run \(missing variant"):
        merge_feedback({"a.json": _report([{"seed": 0}])})

    files = [tmp_path / "a.json", tmp_path / "b.json"]
    for path, part in zip(files, (low, high), strict=True):
        path.write_text(json.dumps(_report(part)))
    out = tmp_path / "merged.json"
    env = {**os.environ, "COLUMNS": "200"}
    done = subprocess.run([sys.executable, "-m", "memopt", "bench", "merge", *map(str, files), "--out", str(out)],
                          capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "6 seed(s) (0–5)" in done.stdout and "attribution > outcome: holds" in done.stdout
    assert json.loads(out.read_text())["ordering"] == json.loads(json.dumps(ordering(runs, ceiling=0.5)))
    done = subprocess.run([sys.executable, "-m", "memopt", "bench", "merge", str(files[0]), "missing.json"],
                          capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 2 and "missing.json: no such report" in done.stderr and "Traceback" not in done.stderr


# `memopt bench ...` that sends itself SIGINT once its second run is finished (and written): the interruption lands
# at that point however loaded the machine is.
INTERRUPT_AFTER_TWO = """\
import os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
import memopt.bench.feedback as feedback
bench = feedback.bench_feedback
def interrupted_after_two(*args, on_run=None, **kwargs):
    heard = []
    def hear(run, report):
        on_run(run, report)
        heard.append(run)
        if len(heard) == 2:
            os.kill(os.getpid(), signal.SIGINT)
    return bench(*args, on_run=hear, **kwargs)
feedback.bench_feedback = interrupted_after_two
sys.argv = ["memopt", *sys.argv[1:]]
from memopt.cli import main
main()
"""


@pytest.mark.slow  # over 4 s on a quiet machine (CI runs it with -m slow)
def test_an_interrupted_bench_keeps_its_finished_runs_for_merge(tmp_path):
    tiny = tmp_path / "tiny.yaml"
    tiny.write_text(QUICKSTART.read_text().replace("conversations=12,sessions=8", "conversations=4,sessions=3"))
    bench = subprocess.run([sys.executable, "-c", INTERRUPT_AFTER_TWO, "bench", "feedback", "--experiment", str(tiny),
                            "--budget", "1500", "--seeds", "4", "--rounds", "2", "--variants", "score", "--out",
                            "part.json"], cwd=tmp_path, capture_output=True, text=True, timeout=900)
    lines = bench.stderr.splitlines()
    assert bench.returncode == 130, bench.stderr[-3000:]
    assert lines[0].startswith("[1/4] score seed 0: test F1 ") and " LM calls, " in lines[0]
    assert lines[1].startswith("[2/4] score seed 1: ") and not any(line.startswith("[3/4]") for line in lines)
    part = json.loads((tmp_path / "part.json").read_text())
    assert part["complete"] is False and part["planned"] == 4 and part["seeds"] == [0, 1]
    assert [r["seed"] for r in part["runs"]] == part["seeds"]
    merged = subprocess.run([sys.executable, "-m", "memopt", "bench", "merge", "part.json"], capture_output=True,
                            text=True, cwd=tmp_path, env={**os.environ, "COLUMNS": "200"})
    assert merged.returncode == 0, merged.stderr
    assert "quickstart: partial, 2 of the 4 runs planned" in merged.stdout


@pytest.mark.slow  # over 4 s on a quiet machine (CI runs it with -m slow)
def test_resplit_reports_each_run_against_its_own_splits_oracle(tmp_path):
    from memopt.bench.feedback import bench_feedback
    from memopt.optimize.loop import splits_of

    tiny = tmp_path / "tiny.yaml"
    tiny.write_text(QUICKSTART.read_text().replace("conversations=12,sessions=8", "conversations=5,sessions=3"))
    report = bench_feedback(tiny, budget=700, seeds=2, rounds=1, variants=["outcome"], resplit=True)
    assert report["resplit"] is True and sorted(report["split_oracles"]) == ["0", "1"]
    splits = {seed: oracle["split"] for seed, oracle in report["split_oracles"].items()}
    assert splits["0"] != splits["1"]  # each seed is its own split of the data
    for run in report["runs"]:
        oracle = report["split_oracles"][str(run["seed"])]
        assert run["split_seed"] == run["seed"] and run["oracle_test_f1"] == oracle["test_f1"]
        assert run["test_f1_before"] == oracle["seed_test_f1"]  # the seed prompts on that split's test
        experiment = load_experiment(tiny, {"data.split_seed": run["seed"]})
        assert [sorted(c.sample_id for c in part) for part in splits_of(experiment)[1:]] == \
            [oracle["split"][k] for k in ("train", "val", "test")]
    row = {r["variant"]: r for r in report["rows"]}["reference"]
    per_seed = [o["test_f1"] - o["seed_test_f1"] for o in report["split_oracles"].values()]
    assert row["runs"] == 2 and row["gain"] == pytest.approx(sum(per_seed) / 2, abs=1e-4)
    assert row["gain_sd"] > 0 or per_seed[0] == per_seed[1]
    mean_oracle = sum(o["test_f1"] for o in report["split_oracles"].values()) / 2
    assert report["oracle"] == {"test_f1": pytest.approx(mean_oracle, abs=1e-4),
                                "seed_test_f1": pytest.approx(row["test_f1_before"], abs=1e-4), "per_split": True,
                                "seconds": row["seconds"]}
    assert row["seconds"] == pytest.approx(sum(o["seconds"] for o in report["split_oracles"].values()) / 2, abs=0.06)


def _split_run(variant: str, seed: int, gain: float, before: float, oracle: float) -> dict:
    return {"variant": variant, "seed": seed, "gain": gain, "test_f1_before": before, "test_f1_after": before + gain,
            "lm_calls": 100, "seconds": 1.0, "split_seed": seed, "oracle_test_f1": oracle}


def test_resplit_rows_ceiling_and_merge_pair_each_seed_with_its_split(tmp_path):
    from memopt.bench.feedback import merge_feedback
    from memopt.core.errors import ConfigError

    befores, oracles = [0.2, 0.3, 0.1, 0.25], [0.5, 0.4, 0.6, 0.45]
    runs = [_split_run("attribution", s, g, befores[s], oracles[s]) for s, g in enumerate([0.28, 0.09, 0.45, 0.19])]
    runs += [_split_run("outcome", s, g, befores[s], oracles[s]) for s, g in enumerate([0.20, 0.05, 0.30, 0.12])]
    split_oracles = {str(s): {"test_f1": oracles[s], "seed_test_f1": befores[s], "split": {"test": [str(s)]},
                              "seconds": 2.0} for s in range(4)}

    def report(part: list[dict], seeds: range) -> dict:
        return {"experiment": "locomo_mem0", "budget": 20000, "rounds": 8, "resplit": True,
                "split_oracles": {str(s): split_oracles[str(s)] for s in seeds},
                "oracle": {"test_f1": 0.0, "seed_test_f1": 0.0, "per_split": True}, "runs": part}

    merged = merge_feedback({"a.json": report([r for r in runs if r["seed"] < 2], range(2)),
                             "b.json": report([r for r in runs if r["seed"] >= 2], range(2, 4))})
    rows = {r["variant"]: r for r in merged["rows"]}
    oracle_gains = [o - b for o, b in zip(oracles, befores, strict=True)]
    assert rows["reference"]["gain"] == pytest.approx(sum(oracle_gains) / 4, abs=1e-4)
    assert rows["reference"]["runs"] == 4
    assert rows["reference"]["gain_sd"] > 0 and rows["reference"]["seconds"] == 2.0
    # a row's share is its mean gain over the mean gain of its own seeds' oracles, not of one split's
    assert rows["attribution"]["share_of_oracle_gain"] == pytest.approx(
        (0.28 + 0.09 + 0.45 + 0.19) / sum(oracle_gains), abs=1e-3)
    # at the ceiling, each seed scores its own split's oracle: per seed 0.30, 0.10, 0.50, 0.20 against outcome's
    assert merged["ordering"] == ordering(runs, ceiling=dict(enumerate(oracle_gains)))
    assert merged["ordering"]["attribution > outcome"]["ceiling_seeds_needed"] != \
        ordering(runs, ceiling=sum(oracle_gains) / 4)["attribution > outcome"]["ceiling_seeds_needed"]
    assert merged["oracle"]["per_split"] is True and merged["oracle"]["test_f1"] == pytest.approx(0.4875)

    fixed = _report([r for r in runs if r["seed"] >= 2], experiment="locomo_mem0", budget=20000)
    with pytest.raises(ConfigError, match=r"a.json splits the data per seed \(--resplit\) and b.json does not"):
        merge_feedback({"a.json": report([r for r in runs if r["seed"] < 2], range(2)), "b.json": fixed})
    other = report([r for r in runs if r["seed"] >= 2], range(2, 4))
    other["split_oracles"]["1"] = {**split_oracles["1"], "test_f1": 0.9}  # seed 1 split scored otherwise
    with pytest.raises(ConfigError, match=r"b.json: its oracle or seed prompts score differently from a.json's"):
        merge_feedback({"a.json": report([r for r in runs if r["seed"] < 2], range(2)), "b.json": other})
    lost = report([r for r in runs if r["seed"] >= 2], range(2, 3))  # seed 3's oracle missing
    with pytest.raises(ConfigError, match=r"b.json: runs\[1\] has no split oracle"):
        merge_feedback({"a.json": report([r for r in runs if r["seed"] < 2], range(2)), "b.json": lost})
    nan = report([{**r, "oracle_test_f1": float("nan")} for r in runs if r["seed"] >= 2], range(2, 4))
    with pytest.raises(ConfigError, match=r"b.json: runs\[0\] has no split oracle"):
        merge_feedback({"a.json": report([r for r in runs if r["seed"] < 2], range(2)), "b.json": nan})

    files = [tmp_path / "a.json", tmp_path / "b.json"]
    files[0].write_text(json.dumps(report([r for r in runs if r["seed"] < 2], range(2))))
    files[1].write_text(json.dumps(report([r for r in runs if r["seed"] >= 2], range(2, 4))))
    done = subprocess.run([sys.executable, "-m", "memopt", "bench", "merge", *map(str, files), "--markdown"],
                          capture_output=True, text=True, env={**os.environ, "COLUMNS": "250"}, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "4 seed(s) (0–3), each its own split (4 distinct)" in done.stdout
    assert "| reference | best directive subset of each split chosen on its val, no optimizer; " in done.stdout


def test_seeds_that_do_not_vary_the_runs_give_no_p_value():
    """evermemos: every seed gave the same run, so the seeds are copies of one run, not ten pieces of evidence; a
    p-value over them would claim what one run cannot show."""
    from memopt.bench.seeds import COPIES

    copies = _runs({"attribution": [0.3] * 10, "outcome": [0.2] * 10})
    for run in copies:  # the paths differ (calls, rounds), the results do not: still copies of one result each
        run["lm_calls"] += run["seed"]
    claims = ordering(copies)
    assert claims["attribution > outcome"]["verdict"] == COPIES and claims["attribution > outcome"]["p"] is None
    assert claims["attribution > outcome"]["distinct"] == {"attribution": 1, "outcome": 1}
    varied = _runs({"attribution": [0.3] * 10, "outcome": [0.20, 0.21, 0.19, 0.2, 0.22, 0.18, 0.2, 0.21, 0.2, 0.19]})
    for run in varied:
        run["lm_calls"] += int(run["gain"] * 1000) if run["variant"] == "outcome" else 0
    assert ordering(varied)["attribution > outcome"]["verdict"] == "holds"  # one side varies: a real test
    report = _report(copies)
    from memopt.bench.feedback import markdown_table, merge_feedback

    rows = {r["variant"]: r for r in merge_feedback({"a.json": report})["rows"]}
    assert rows["attribution"]["distinct_runs"] == 1
    assert "| 10 (1 distinct result) | attribution |" in markdown_table(merge_feedback({"a.json": report}))


def test_the_reference_is_called_so_and_counts_the_runs_above_it():
    from memopt.bench.feedback import REFERENCE, merge_feedback

    runs = _runs({"attribution": [0.55, 0.45, 0.3], "outcome": [0.2, 0.25, 0.3]})  # before 0.2, reference 0.7
    rows = {r["variant"]: r for r in merge_feedback({"a.json": _report(runs)})["rows"]}
    assert REFERENCE == "reference" and rows[REFERENCE]["above"] == 1  # 0.2 + 0.55 > 0.7
    assert "1 of 6 runs end above it" in rows[REFERENCE]["ops"]


def test_bench_merge_of_several_experiments_gives_one_row_each(tmp_path):
    """Every shipped experiment in one table: reports of several experiments are merged per experiment."""
    from memopt.bench.feedback import merge_experiments, summary_table

    quick = _report(_runs({"attribution": [0.35, 0.30, 0.40], "outcome": [0.25, 0.24, 0.20]}))
    ever = _report(_runs({"attribution": [0.1] * 3, "outcome": [0.05] * 3}), experiment="evermemos")
    merged = merge_experiments({"q.json": quick, "e.json": ever})
    assert list(merged) == ["quickstart", "evermemos"]
    table = summary_table(merged).splitlines()
    assert len(table) == 4 and table[2].startswith("| quickstart | 6,000 | 3 | +0.350")
    assert "(1 distinct result)" in table[3] and "no p-value: seeds do not vary the runs" in table[3]
    files = [tmp_path / "q.json", tmp_path / "e.json"]
    files[0].write_text(json.dumps(quick))
    files[1].write_text(json.dumps(ever))
    done = subprocess.run([sys.executable, "-m", "memopt", "bench", "merge", *map(str, files)], capture_output=True,
                          text=True, env={**os.environ, "COLUMNS": "250"}, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "| evermemos | 6,000 | 3 |" in done.stdout
    assert "evermemos: attribution > outcome: seeds do not vary the runs" in done.stdout


def test_bench_merge_knows_the_kinds_of_a_renderings_file(tmp_path):
    """Reports of `bench feedback --renderings FILE` hold kinds attribution_<name>; `bench merge --renderings FILE`
    knows them again (without it: one clear error naming the kind)."""
    (tmp_path / "mine.py").write_text("def ticket(p):\n    return f'TICKET {getattr(p, \"question\", \"\")}'\n")
    runs = _runs({"attribution": [0.35, 0.30, 0.40, 0.36], "attribution_ticket": [0.34, 0.31, 0.38, 0.35],
                  "outcome": [0.25, 0.24, 0.20, 0.27]})
    files = [tmp_path / "a.json", tmp_path / "b.json"]
    for path, part in zip(files, ([r for r in runs if r["seed"] < 2], [r for r in runs if r["seed"] >= 2]),
                          strict=True):
        path.write_text(json.dumps(_report(part)))
    env = {**os.environ, "COLUMNS": "200"}
    command = [sys.executable, "-m", "memopt", "bench", "merge", *map(str, files)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 2 and "unknown feedback kind 'attribution_ticket'" in done.stderr
    assert "Traceback" not in done.stderr
    done = subprocess.run([*command, "--renderings", "mine.py", "--out", "merged.json"], capture_output=True,
                          text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    merged = json.loads((tmp_path / "merged.json").read_text())
    assert {r["variant"]: r["runs"] for r in merged["rows"]}["attribution_ticket"] == 4
    assert merged["seeds"] == [0, 1, 2, 3]
