"""`memopt bench feedback` end to end on a tiny experiment, and the catalogue oracle it reports against."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from memopt.bench.feedback import default_variants, ordering
from memopt.bench.oracle import oracle_instructions, share_of_gain
from memopt.experiment import load_experiment
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
    assert list(rows) == [*VARIANTS, "oracle"] and len(report["runs"]) == len(VARIANTS)
    oracle = rows["oracle"]
    assert oracle["test_f1_after"] == report["oracle"]["test_f1"] > oracle["test_f1_before"]
    assert oracle["share_of_oracle_gain"] == 1.0 and oracle["lm_calls"] == 0
    for name in VARIANTS:
        row = rows[name]
        assert row["test_f1_before"] == oracle["test_f1_before"] and row["runs"] == 1
        assert row["share_of_oracle_gain"] == share_of_gain(row["test_f1_before"], row["test_f1_after"],
                                                             oracle["test_f1_after"])
        assert 0 < row["lm_calls"] <= 300 * 1.5
    assert set(report["ordering"]) == set(ordering(report["rows"]))
    assert "| quickstart | 300 | 1 | oracle |" in done.stdout and "attribution > outcome:" in done.stdout


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


def test_share_of_gain_and_ordering_verdicts():
    assert share_of_gain(0.2, 0.5, 0.8) == 0.5 and share_of_gain(0.2, 0.5, 0.2) is None
    rows = [{"variant": v, "gain": g, "gain_sd": 0.01} for v, g in
            (("attribution", 0.5), ("outcome", 0.3), ("score", 0.1), ("empty", 0.105), ("misleading", 0.05))]
    verdicts = ordering(rows)
    assert all(verdicts[k] for k in verdicts if k != "attribution ≥ 1.5 × outcome")
    assert verdicts["attribution ≥ 1.5 × outcome"] is True
    rows[0]["gain"] = 0.4
    assert ordering(rows)["attribution ≥ 1.5 × outcome"] is False
    assert load_experiment(QUICKSTART).optimizer.search  # the oracle chooses among these knob values on val


def test_the_format_controls_run_only_when_asked():
    from memopt.feedback_kinds import kind_names

    assert default_variants() == list(VARIANTS)
    formats = {f"attribution_{f}" for f in ("prose", "qa", "json", "table", "bullets", "yaml", "intl")}
    assert formats <= set(kind_names()) and not formats & set(default_variants())


def test_ordering_without_score_or_empty_rows_gives_no_verdict_on_them():
    """A bench of attribution and a format control only (no score, no empty row) still reports its ordering."""
    verdicts = ordering([{"variant": "attribution", "gain": 0.3, "gain_sd": 0.0},
                         {"variant": "attribution_prose", "gain": 0.3, "gain_sd": 0.0}])
    assert verdicts["score ≈ empty"] is None and verdicts["attribution > outcome"] is None
