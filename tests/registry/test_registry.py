"""The one registry idiom (`memopt.registry`) for attribution methods and feedback kinds: lookup by name,
one clear error listing the known names, and the plug-in rules (no shipped name taken, no choice between two
plug-ins, a broken plug-in breaks only itself), with real installed-distribution metadata on ``sys.path``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from memopt.attribution.registry import METHODS, attribution_method, attribution_methods, get_method
from memopt.core.errors import ConfigError, PluginError
from memopt.feedback.kinds import feedback_kind, feedback_kinds, get_kind
from memopt.optimize.experiment import load_experiment
from tests.conftest import ROOT

QUICKSTART = ROOT / "experiments" / "quickstart.yaml"


def _distribution(site: Path, name: str, group: str, entries: dict[str, str], module: str, code: str) -> None:
    """A distribution as pip leaves it: a module and a dist-info with METADATA and entry_points.txt."""
    info = site / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in entries.items()))
    (site / f"{module}.py").write_text(code)


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """Install distributions into a directory on sys.path; the registries forget them afterwards."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))

    def install(*args: object) -> None:
        _distribution(site, *args)  # type: ignore[arg-type]
        attribution_methods.discover()
        feedback_kinds.discover()

    yield install
    monkeypatch.undo()
    for module in [m for m in sys.modules if m.startswith("plugin_")]:
        del sys.modules[module]
    attribution_methods.discover()
    feedback_kinds.discover()


def test_memopts_own_names_in_order_and_what_they_declare():
    assert list(METHODS) == attribution_methods.shipped() == ["memtrace", "counterfactual", "all_at_once",
                                                              "step_by_step", "binary_search", "blame_response"]
    assert [m for m in METHODS if get_method(m).needs_replay] == ["counterfactual"]
    formats = [f"attribution_{f}" for f in ("prose", "qa", "json", "table", "bullets", "yaml", "intl")]
    assert feedback_kinds.shipped() == ["attribution", "outcome", "score", "empty", "misleading", *formats]
    assert [k for k in feedback_kinds.shipped() if get_kind(k).rendering_of] == formats  # the format controls
    assert [k for k in feedback_kinds.shipped() if not get_kind(k).uses_attribution] == ["outcome", "score"]
    assert [k for k in feedback_kinds.shipped() if get_kind(k).gepa] == ["attribution", "outcome"]
    assert [k for k in feedback_kinds.shipped() if get_kind(k).control] == ["outcome", "empty", "misleading", *formats]


def test_unknown_names_are_one_error_naming_the_key_and_the_known_names(tmp_path):
    for key, override, known in (("attribution.method", {"attribution.method": "dowsing"}, "blame_response"),
                                 ("optimizer.feedback", {"optimizer.feedback": "vague"}, "misleading")):
        with pytest.raises(ConfigError) as info:
            load_experiment(QUICKSTART, override)
        message = str(info.value)
        assert f"quickstart.yaml: {key}" in message and known in message and "memopt plugins" in message
    with pytest.raises(ConfigError, match="gepa takes feedback attribution or outcome, not 'score'"):
        load_experiment(QUICKSTART, {"optimizer.name": "gepa", "optimizer.feedback": "score"})


def test_code_cannot_register_a_shipped_name():
    with pytest.raises(PluginError, match="'memtrace' ships with memopt"):
        attribution_method("memtrace")(lambda case, judge: None)
    with pytest.raises(PluginError, match="'outcome' ships with memopt"):
        feedback_kind("outcome")(lambda request: {})
    with pytest.raises(PluginError, match="use a Python identifier"):
        feedback_kind("two words")(lambda request: {})
    assert get_method("memtrace").blame.__module__ == "memopt.attribution.memtrace"


def test_a_plugin_entry_point_cannot_take_a_shipped_name(installed):
    installed("evil-blame", "memopt.attribution_methods", {"memtrace": "plugin_evil:blame"}, "plugin_evil",
              "raise SystemExit('never imported')\n")
    assert get_method("memtrace").blame.__module__ == "memopt.attribution.memtrace"
    assert "evil-blame" in attribution_methods.clash("memtrace") and "refused" in attribution_methods.clash("memtrace")


def test_two_plugins_with_one_name_are_refused_naming_both(installed):
    for dist in ("one-kind", "other-kind"):
        installed(dist, "memopt.feedback_kinds", {"terse": f"plugin_{dist[:3]}:terse"}, f"plugin_{dist[:3]}",
                  "def terse(request):\n    return {}\n")
    assert "terse" in feedback_kinds.names()
    with pytest.raises(PluginError, match="one-kind .*and other-kind"):
        get_kind("terse")


def test_a_broken_plugin_fails_alone_with_its_entry_point_named(installed):
    installed("broken-method", "memopt.attribution_methods", {"shaky": "plugin_shaky:shaky"}, "plugin_shaky",
              "import sys\nsys.exit(3)\n")
    with pytest.raises(PluginError, match=r"'shaky' could not be loaded \(entry point shaky = plugin_shaky:shaky.*"
                                          r"sys.exit\(3\)"):
        get_method("shaky")
    assert get_method("memtrace").name == "memtrace"


def test_a_plain_function_entry_point_is_registered_by_its_name(installed):
    installed("plain-method", "memopt.attribution_methods", {"first_op": "plugin_plain:first_op"}, "plugin_plain",
              "def first_op(case, judge):\n    return 'blamed'\n")
    method = get_method("first_op")
    assert method.name == "first_op" and not method.needs_replay and method(None, None) == "blamed"
    assert attribution_methods.source("first_op") == "plain-method 0.1: plugin_plain:first_op"
