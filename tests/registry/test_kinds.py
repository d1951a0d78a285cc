"""Optimizers, judges and in-process LM providers follow the one registry idiom: a decorator or an installed
entry point, lookup by name, the experiment / spec / CLI reading the registry (no name lists of their own)."""

from __future__ import annotations

import sys

import dspy
import pytest

from memopt.core.errors import ConfigError, PluginError
from memopt.judge.judges import LexicalJudge, judges, make_judge
from memopt.lm.build import make_lm
from memopt.lm.providers import lm_providers
from memopt.lm.spec import parse_lm_spec
from memopt.optimize.events import trackers
from memopt.optimize.experiment import load_experiment
from memopt.optimize.registry import get_optimizer, optimizers
from tests.conftest import ROOT
from tests.registry.test_registry import _distribution

QUICKSTART = ROOT / "experiments" / "quickstart.yaml"

OPTIMIZER_PLUGIN = '''
from memopt.optimize.registry import OptimizerEntry


class KeepSeed:
    """Never changes a prompt: the baseline of baselines."""

    guard = None

    def __init__(self, experiment, scorer):
        self.seed = experiment.seed

    def step(self, system, round_index, *, trainset, valset, current_val):
        return None

    def describe(self):
        return {"name": "keep_seed", "seed": self.seed}


keep_seed = OptimizerEntry("keep_seed", KeepSeed, feedback="score")
'''

JUDGE_PLUGIN = '''
class ExactJudge:
    """Correct only when the prediction equals the gold, ignoring case and surrounding spaces."""

    simulated = False

    def __init__(self):
        self.calls = 0

    def correct(self, question, gold, prediction):
        self.calls += 1
        return gold.strip().lower() == prediction.strip().lower()

    def contains(self, information, text):
        self.calls += 1
        return information.lower() in text.lower()

    def locate(self, question, gold, trace):
        self.calls += 1
        return "ResponseError", "none"


def exact(*, seed=0, callbacks=None, cache=False):
    return ExactJudge()
'''

PROVIDER_PLUGIN = '''
from memopt.lm.providers import LMProvider
from memopt.simlm import SimEngine

# SimLM under another name, seeded by the spec's argument: a second in-process provider.
twin = LMProvider("twin", lambda spec, seed: SimEngine(seed=int(spec.arg or seed)), simulated=True)
'''

TRACKER_PLUGIN = '''
from memopt.tracking import NullTracker

HEARD = []


class Listening(NullTracker):
    """Records nothing, like NullTracker, but keeps the kind of every event it hears."""

    def on_event(self, event):
        HEARD.append(event.kind)
        return super().on_event(event)


def listening(experiment):
    return Listening()
'''


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """Install distributions into a directory on sys.path; the registries forget them afterwards."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    registries = (optimizers, judges, lm_providers, trackers)

    def install(*args: object) -> None:
        _distribution(site, *args)  # type: ignore[arg-type]
        for registry in registries:
            registry.discover()

    yield install
    monkeypatch.undo()
    for module in [m for m in sys.modules if m.startswith("plugin_")]:
        del sys.modules[module]
    for registry in registries:
        registry.discover()


def test_memopts_own_optimizers_judges_and_providers():
    assert optimizers.shipped() == ["memtrace", "score_only", "gepa"]
    assert get_optimizer("score_only").feedback == "score" and get_optimizer("gepa").gepa_feedback
    assert judges.shipped() == ["lexical"] and isinstance(make_judge("lexical"), LexicalJudge)
    assert lm_providers.shipped() == ["sim"]
    spec = parse_lm_spec("sim:4")
    assert (spec.provider, spec.simulated, spec.seed) == ("sim", True, 4)


def test_an_installed_optimizer_is_chosen_by_name_and_validated_by_what_it_declares(installed):
    installed("plugin-keep", "memopt.optimizers", {"keep_seed": "plugin_keep:keep_seed"}, "plugin_keep",
              OPTIMIZER_PLUGIN)
    experiment = load_experiment(QUICKSTART, {"optimizer.name": "keep_seed"})
    assert experiment.optimizer.feedback_kind == "score"  # what the plug-in declared, not memopt's default
    built = get_optimizer("keep_seed")(experiment, scorer=None)
    assert built.describe() == {"name": "keep_seed", "seed": experiment.seed}
    with pytest.raises(ConfigError, match="keep_seed reads feedback 'score' only"):
        load_experiment(QUICKSTART, {"optimizer.name": "keep_seed", "optimizer.feedback": "outcome"})
    with pytest.raises(ConfigError, match="unknown optimizer 'nope'.*memtrace, score_only, gepa, keep_seed"):
        load_experiment(QUICKSTART, {"optimizer.name": "nope"})


def test_an_installed_judge_is_a_judge_spec(installed):
    installed("plugin-exact", "memopt.judges", {"exact": "plugin_exact:exact"}, "plugin_exact", JUDGE_PLUGIN)
    judge = make_judge("exact")
    assert judge.correct("q", "Max", " max ") and not judge.correct("q", "Max", "Luna") and judge.calls == 2
    assert type(make_judge("sim")).__name__ == "LMJudge"  # an LM spec is still an LM judge


def test_an_installed_lm_provider_is_an_lm_spec_that_answers(installed):
    installed("plugin-twin", "memopt.lm_providers", {"twin": "plugin_twin:twin"}, "plugin_twin", PROVIDER_PLUGIN)
    spec = parse_lm_spec("twin:7")
    assert (spec.provider, spec.arg, spec.simulated, spec.model) == ("twin", "7", True, "twin/memopt")
    lm = make_lm("twin:7")
    with dspy.context(lm=lm):
        reply = dspy.Predict("question -> answer")(question="What is 2 + 2?")
    assert isinstance(reply.answer, str) and lm.history  # the call went through the plug-in's engine
    assert parse_lm_spec("twin/model@http://127.0.0.1:9/v1").provider is None  # a LiteLLM spec stays one


def test_a_plugin_cannot_take_a_shipped_optimizer_judge_or_provider_name(installed):
    installed("plugin-bad", "memopt.lm_providers", {"sim": "plugin_twin_bad:twin"}, "plugin_twin_bad",
              PROVIDER_PLUGIN)
    assert "refused" in lm_providers.clash("sim") and parse_lm_spec("sim").provider == "sim"
    with pytest.raises(PluginError, match="ships with memopt"):
        judges.register("lexical", lambda **_: None, module="someone_else")
    with pytest.raises(PluginError, match="ships with memopt"):
        optimizers.register("gepa", lambda e, s: None, module="someone_else")


def test_an_installed_tracker_is_chosen_by_name_and_hears_the_run(installed):
    from memopt.optimize.loop import run_experiment

    installed("plugin-listen", "memopt.trackers", {"listening": "plugin_listen:listening"}, "plugin_listen",
              TRACKER_PLUGIN)
    assert trackers.shipped() == ["mlflow", "untracked"] and "listening" in trackers.names()
    experiment = load_experiment(QUICKSTART, {"rounds": 1, "budget.max_lm_calls": 400})
    run_experiment(experiment, tracker="listening")
    heard = sys.modules["plugin_listen"].HEARD
    assert heard[0] == "run_started" and heard[-1] == "run_finished" and "round_scored" in heard
    with pytest.raises(PluginError, match="ships with memopt"):
        trackers.register("mlflow", lambda e: None, module="someone_else")
