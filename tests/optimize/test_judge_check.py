"""A run checks its judge before trusting it: a judge that agrees with everything stops the run with one error, or,
with ``judge_check: warn``, the run goes on with a warning every round and each round says why nothing was
attributed.

The agreeable judge is a real LM spec through the real registry of LM providers: an in-process provider
(``agreeable``) whose engine is SimLM's, except that every verdict of correctness it writes says True.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from memopt.core.errors import ConfigError
from memopt.judge.check import KNOWN_PAIRS, check_judge, judge_probes

EXPERIMENT = """\
name: judged
pipeline: mem0
data: {{source: "synthetic:conversations=4,sessions=2,seed=3,questions_per_conversation=6"}}
lm: {{task: sim, judge: {judge}, reflection: sim}}
optimizer: {{name: memtrace, candidates: 2, ops_per_round: 1, trials: 2}}
rounds: 2
judge_check: {check}
mlflow: {{experiment: judged, traces: none}}
"""

# Registers the provider, then runs `memopt` (the same lines serve the in-process tests, exec'd).
AGREEABLE = """\
import re
from memopt.lm.providers import lm_provider, lm_providers

class Agreeable:
    def __init__(self, seed):
        from memopt.simlm import SimEngine
        self.sim = SimEngine(seed=seed)
    def complete(self, request):
        from dspy.lm15 import Message, Response, TextPart
        reply = self.sim.complete(request)
        text = reply.message.text if hasattr(reply.message, "text") else reply.message.parts[0].text
        text = re.sub(r"(\\[\\[ ## correct ## \\]\\]\\s*)\\w+", r"\\1True", text)
        text = re.sub(r'("correct"\\s*:\\s*)(true|false)', r"\\1true", text)
        return Response(id=None, model="agreeable", message=Message.assistant([TextPart(text)]),
                        finish_reason="stop", usage=reply.usage)
    def stream(self, request):
        from dspy.lm15 import response_to_events
        return response_to_events(self.complete(request))
    def close(self):
        pass

if "agreeable" not in lm_providers:
    lm_provider("agreeable")(lambda spec, seed: Agreeable(seed))
"""
DRIVER = AGREEABLE + """
import sys
sys.argv = ["memopt", *sys.argv[1:]]
from memopt.cli import main
main()
"""


@pytest.fixture(scope="module", autouse=True)
def _agreeable() -> None:
    exec(AGREEABLE, {})  # noqa: S102 - the provider the subprocesses register too


def _experiment(path: Path, judge: str, check: str = "stop") -> Path:
    path.write_text(EXPERIMENT.format(judge=judge, check=check), encoding="utf-8")
    return path


def test_the_agreeable_judge_is_real_and_agrees_with_everything():
    from memopt.judge.judges import make_judge

    judge = make_judge("agreeable")
    assert judge.correct("When did Maya start?", "4 March 2021", "") is True  # an empty answer "correct"
    assert make_judge("sim").correct("When did Maya start?", "4 March 2021", "") is False


def test_probes_are_clear_cut_and_an_agreeable_judge_fails_while_a_sound_one_passes():
    from memopt.judge.judges import make_judge
    from memopt.judge.metrics import locomo_f1

    cases = [("When did Ana move to Lisbon?", "7 May 2023"), ("What pet does Ben have?", "a grey cat"),
             ("Where does Cal work?", "the harbour office"), ("Who visited Dee?", "her brother Sam"),
             ("What is unknown?", "Not mentioned in the conversation")]
    probes = judge_probes(cases)
    assert {p.kind for p in probes} == {"exact", "empty", "unrelated", "known"}
    assert all(p.question != "What is unknown?" for p in probes)  # an abstention is not clear-cut
    for p in probes:
        if p.kind in ("exact", "empty", "unrelated"):
            assert locomo_f1(p.prediction, p.gold, 1) == (1.0 if p.expected else 0.0), p
    assert set(KNOWN_PAIRS) <= set(probes)
    sound = check_judge(make_judge("sim").correct, probes)
    agreeable = check_judge(make_judge("agreeable").correct, probes)
    assert sound.passed and sound.agreement(True) == sound.agreement(False) == 1.0
    assert not agreeable.passed and agreeable.agreement(True) == 1.0 and agreeable.agreement(False) == 0.0
    assert "0% of" in agreeable.summary() and "called ''" not in agreeable.summary()


def test_a_run_with_a_judge_that_agrees_with_everything_stops_before_round_zero(tmp_path):
    from memopt.optimize.experiment import load_experiment
    from memopt.optimize.loop import make_scorer, run_experiment

    experiment = load_experiment(_experiment(tmp_path / "e.yaml", "agreeable"))
    scorer = make_scorer(experiment)
    said = (r"the judge 'agreeable' \(lm.judge\) failed its check before round 0: it agreed .* and 0% of \d+ "
            r"clear-cut wrong ones .*it called an empty answer correct.*judge_check: warn")
    with pytest.raises(ConfigError, match=said):
        run_experiment(experiment, tracker="untracked", scorer=scorer)
    usage = scorer.usage_by_meter()
    assert usage["judge"].calls >= 10 and usage["task"].calls == 0  # it asked the judge, and ran nothing else


@pytest.mark.slow  # over 4 s on a quiet machine (CI runs it with -m slow)
def test_a_run_that_insists_warns_every_round_and_says_why_nothing_was_attributed(tmp_path):
    experiment = _experiment(tmp_path / "e.yaml", "agreeable", check="warn")
    done = subprocess.run([sys.executable, "-c", DRIVER, "optimize", str(experiment), "--out", "summary.json"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600,
                          env={k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"})
    assert done.returncode == 0, done.stderr[-3000:]
    rounds = json.loads((tmp_path / "summary.json").read_text())["rounds"]
    warnings = re.findall(r"^warning: the judge 'agreeable' \(lm.judge\) failed its check", done.stderr, re.M)
    assert rounds and len(warnings) == len(rounds) + 1, done.stderr  # round 0 and every round after it
    assert all(r["warnings"] for r in rounds)
    assert done.stderr.count("nothing to attribute: the judge called all") == len(rounds), done.stderr
    stopped = subprocess.run([sys.executable, "-c", DRIVER, "optimize", str(_experiment(tmp_path / "s.yaml",
                                                                                        "agreeable"))],
                             capture_output=True, text=True, cwd=tmp_path, timeout=600,
                             env={k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"})
    lines = [line for line in stopped.stderr.splitlines() if line.strip()]
    assert stopped.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: the judge 'agreeable'"), \
        stopped.stderr


CONTRARY = AGREEABLE.replace("Agreeable", "Contrary").replace('"agreeable"', '"contrary"').replace(
    "\\1True", "\\1False").replace("\\1true", "\\1false")  # a judge that calls every answer wrong


def test_a_judge_that_rejects_correct_answers_is_told_apart_from_one_that_accepts_everything(tmp_path):
    from memopt.judge.judges import make_judge
    from memopt.optimize.experiment import load_experiment
    from memopt.optimize.loop import make_scorer, run_experiment

    exec(CONTRARY, {})  # noqa: S102
    probes = judge_probes([("When did Ana move to Lisbon?", "7 May 2023"), ("What pet does Ben have?", "a grey cat")])
    contrary = check_judge(make_judge("contrary").correct, probes)
    agreeable = check_judge(make_judge("agreeable").correct, probes)
    assert "rejects correct answers" in contrary.behaviour() and "agrees with everything" not in contrary.behaviour()
    assert "accepts wrong answers" in agreeable.behaviour()
    experiment = load_experiment(_experiment(tmp_path / "e.yaml", "contrary"))
    with pytest.raises(ConfigError) as stopped:
        run_experiment(experiment, tracker="untracked", scorer=make_scorer(experiment))
    assert "rejects correct answers" in str(stopped.value) and "agrees with everything" not in str(stopped.value)


def test_gross_disagreement_of_judge_and_f1_is_one_line_saying_what_to_check():
    from memopt.judge.check import disagreement

    assert "accept wrong answers" in disagreement(1.0, 0.042, 6) and "--judge-lm" in disagreement(1.0, 0.042, 6)
    assert "reject right ones" in disagreement(0.0, 0.95, 6, option="lm.judge")
    assert disagreement(0.6, 0.4, 6) is None and disagreement(1.0, 0.1, 2) is None
    assert disagreement(None, 0.1, 9) is None


@pytest.mark.slow  # two CLI runs (CI runs it with -m slow)
def test_run_and_attribute_with_a_judge_that_accepts_everything_warn(tmp_path):
    data = "synthetic:conversations=2,sessions=3,seed=1"
    run = subprocess.run([sys.executable, "-c", DRIVER, "run", "-p", "mem0", "--data", data, "--limit", "6",
                          "--judge-lm", "agreeable", "--trace", "g", "--out", "r.json"],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "warning: the judge called 100% of 6 answers correct" in run.stderr and "--judge-lm" in run.stderr
    attributed = subprocess.run([sys.executable, "-c", DRIVER, "attribute", "--results", "r.json", "--trace", "g",
                                 "--judge-lm", "agreeable", "--out", "a.jsonl"],
                                capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert attributed.returncode == 0, attributed.stderr
    assert "warning: the judge 'agreeable' failed a check on clear-cut answers" in attributed.stderr
    assert "accepts wrong answers" in attributed.stderr
