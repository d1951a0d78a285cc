"""The terminal side of a run's story: --lm on optimize, per-round lines in words, directives as tables,
the progress clock, the decision of a round (no LM, no MLflow)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from memopt.core.errors import ConfigError
from tests.conftest import ROOT


def _memopt(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memopt", *args], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env={**os.environ, "COLUMNS": "200"})


def test_lm_option_sets_every_role_or_one_and_names_a_wrong_role():
    from memopt.cli.optimize import lm_overrides

    assert lm_overrides(["sim:7"]) == {"lm.task": "sim:7", "lm.judge": "sim:7", "lm.reflection": "sim:7"}
    assert lm_overrides(["sim", "judge=openai/gpt-4.1-mini"]) == {
        "lm.task": "sim", "lm.judge": ["sim", "openai/gpt-4.1-mini"], "lm.reflection": "sim"}
    url = "openai/m@http://127.0.0.1:8080/v1?x=1"  # an '=' inside a spec is not a role
    assert lm_overrides([f"task={url}"]) == {"lm.task": url}
    assert lm_overrides([url])["lm.judge"] == url
    with pytest.raises(ConfigError, match="no LM role 'jduge'.*task, judge, reflection"):
        lm_overrides(["jduge=sim"])
    with pytest.raises(ConfigError, match="no LM spec"):
        lm_overrides(["judge="])


def test_optimize_lm_overrides_reach_the_experiment_and_a_bad_role_is_one_clear_error():
    from memopt.cli.optimize import lm_overrides
    from memopt.optimize.experiment import load_experiment

    lm = load_experiment(ROOT / "experiments" / "quickstart.yaml", lm_overrides(["judge=sim:3"])).lm
    assert [[s.raw for s in specs] for specs in (lm.task, lm.judge, lm.reflection)] == [["sim"], ["sim:3"], ["sim"]]
    assert lm.judge[0].seed == 3 and lm.judge[0].simulated  # parsed once, when the experiment was loaded
    bad = _memopt("optimize", "experiments/quickstart.yaml", "--lm", "jduge=sim", "--estimate")
    assert bad.returncode != 0 and "no LM role 'jduge'" in bad.stderr and "Traceback" not in bad.stderr


def test_directives_are_tables_on_a_terminal_and_markdown_on_request():
    tables = _memopt("directives")
    assert tables.returncode == 0 and "<br>" not in tables.stdout and "|---|" not in tables.stdout
    assert "resolve_dates" in tables.stdout and "┃ id" in tables.stdout
    markdown = _memopt("directives", "--markdown")
    assert markdown.stdout.startswith("| id | operations |") and "<br>" in markdown.stdout


def test_round_line_is_words_not_python_dicts():
    from memopt.cli.optimize import round_line
    from memopt.optimize.state import RoundRecord

    record = RoundRecord(round=2, train=None, val={"f1": 0.5, "judge": 0.6}, test={"f1": 0.4},
                         blamed_ops={"extract": 12, "update": 3}, accepted=False, lm_calls=1234, seconds=75,
                         decision="kept the current prompts: the best candidate trial 3 (extract #1) scored val F1 "
                                  "0.480, not above the current 0.500")
    line = round_line(record, 4)
    assert line.startswith("round 2/4: val F1 0.500, test F1 0.400, val judge 0.600")
    assert "blamed extract 12, update 3" in line and "kept the current prompts: the best" in line
    assert "1,234 LM calls so far, 1m15s" in line and "{" not in line


def test_decision_names_the_kept_trial_or_why_none_was():
    from memopt.optimize.story import candidates_of, decision_of

    tried = [{"ops": {"extract": 0}, "knobs": {"top_k": 10}, "val_f1": 0.50, "errored": False},
             {"ops": {"extract": 1}, "knobs": {"top_k": 10}, "val_f1": 0.55, "errored": False},
             {"ops": {"extract": 2}, "knobs": {"top_k": 20}, "val_f1": None, "errored": True}]
    kept = decision_of(True, tried, 0.55, 0.50, 0.0, {"top_k": 10})
    assert kept == "kept trial 2 (extract #1, top_k=10): val F1 0.550 beats the current 0.500"
    rejected = decision_of(False, tried, 0.55, 0.50, 0.1, {"top_k": 10})
    assert rejected.startswith("kept the current prompts: the best candidate trial 2 (extract #1, top_k=10) scored "
                               "val F1 0.550, not above the current 0.500 + min_gain 0.1")
    listed = candidates_of({"extract": ["Extract facts.\nKeep dates.", "Other."]}, {"extract": "Extract facts."},
                           tried)
    assert [(c["candidate"], c["val_f1"], c["knobs"]) for c in listed] == [(1, 0.55, {"top_k": 10}), (2, None, None)]
    assert "+Keep dates." in listed[0]["diff"] and "-Extract facts." not in listed[0]["diff"]


def test_progress_clock_reads_like_a_duration():
    from memopt.core.progress import clock

    assert [clock(s) for s in (4.6, 75, 3600 + 5 * 60 + 9)] == ["5s", "1m15s", "1h05m"]
