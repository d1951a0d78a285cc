"""A memory system from outside memopt (examples/custom_memory, a summary-buffer memory): built and
installed as a package, found by its entry point, then run, traced, attributed by stage and
optimized through memopt's own commands, with no line of memopt knowing it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memopt.systems.prompts import prompt_hash
from memopt.taxonomy import error_of_stages
from memopt.trace import load_graph, validate
from tests.conftest import ROOT

# Each test builds and installs real distributions (pip, entry points): slow tests, which CI runs with -m slow.
pytestmark = pytest.mark.slow

EXAMPLE = ROOT / "examples" / "custom_memory"
SMALL = "synthetic:conversations=3,sessions=6,seed=11"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The example package built from its pyproject and installed into a directory of its own (as pip
    installs it, with its entry point and its prompt files), offline; the test environment is not changed."""
    tmp = tmp_path_factory.mktemp("plugin")
    source, target = tmp / "source", tmp / "site"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                           "--no-index", "--target", str(target), str(source)], capture_output=True, text=True,
                          timeout=300)
    if done.returncode != 0:
        pytest.fail("could not build examples/custom_memory (needs setuptools>=70.1, in the dev extra: "
                    f"pip install -e '.[dev]'):\n{done.stderr[-2000:]}")
    return target


def memopt(*args: str, site: Path, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "memopt", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=cwd, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


@pytest.fixture(scope="module")
def traced(site, tmp_path_factory) -> Path:
    """A traced run of the plug-in on small synthetic data: results.json and graphs/."""
    tmp = tmp_path_factory.mktemp("traced")
    memopt("run", "-p", "summary_buffer", "--data", SMALL, "--out", "results.json", "--trace", "graphs",
           site=site, cwd=tmp)
    return tmp


def test_memopt_knows_nothing_of_the_example():
    mentions = [str(p.relative_to(ROOT)) for p in (ROOT / "memopt").rglob("*.py")
                if re.search(r"summary_buffer|memopt_custom_memory", p.read_text())]
    assert mentions == []


def test_the_plugin_runs_with_its_packaged_prompts_and_tracing_changes_nothing(site, traced, tmp_path):
    memopt("run", "-p", "summary_buffer", "--data", SMALL, "--out", "plain.json", site=site, cwd=tmp_path)
    plain = json.loads((tmp_path / "plain.json").read_text())
    recorded = json.loads((traced / "results.json").read_text())
    shipped = site / "memopt_custom_memory" / "prompts" / "summary_buffer"
    assert plain["pipeline"] == "summary_buffer" and plain["simulated"] is True and plain["metrics"]["errored"] == 0
    assert plain["prompts"] == {op: prompt_hash((shipped / f"{op}.md").read_text()) for op in ("summarize", "answer")}
    assert [c["prediction"] for c in plain["cases"]] == [c["prediction"] for c in recorded["cases"]]
    graphs = sorted((traced / "graphs").glob("*.json"))
    assert len(graphs) == 3
    G = load_graph(graphs[0])
    assert validate(G) == [] and G.graph["pipeline"] == "summary_buffer"
    assert {op: spec["stages"] for op, spec in G.graph["operations"].items()} == {
        "summarize": ["extraction"], "compress": ["update"], "recall": ["retrieval"], "answer": ["response"]}
    assert any(d.get("action") == "UPDATE" and d["kind"] == "summary" for _, d in G.nodes(data=True))


def test_its_failures_are_blamed_on_its_ops_by_stage(site, traced):
    memopt("attribute", "--results", "results.json", "--trace", "graphs", "--out", "attributions.jsonl",
           site=site, cwd=traced)
    attributions = [json.loads(line) for line in (traced / "attributions.jsonl").read_text().splitlines()]
    stages = {"summarize": ("extraction",), "compress": ("update",), "recall": ("retrieval",), "answer": ("response",)}
    assert attributions and all(a["error_type"] == error_of_stages(stages[a["operation"]]) for a in attributions)
    blamed = {a["operation"] for a in attributions}
    assert {"summarize", "compress", "answer"} <= blamed


@pytest.mark.slow  # ≈ 20-60 s: MLflow's store and a full round
def test_one_round_of_optimize_tunes_its_prompts_and_knobs(site, tmp_path):
    text = (EXAMPLE / "summary_buffer.yaml").read_text().replace("conversations=12,sessions=8", "conversations=4,"
                                                                                                  "sessions=6")
    (tmp_path / "small.yaml").write_text(text)
    memopt("optimize", "small.yaml", "--rounds", "1", "--tracking-uri", f"sqlite:///{tmp_path / 'mlflow.db'}",
           "--out", "summary.json", site=site, cwd=tmp_path)
    summary = json.loads((tmp_path / "summary.json").read_text())
    [round_1] = summary["rounds"]
    assert summary["pipeline"] == "summary_buffer"
    assert {"summarize", "compress", "answer"} <= set(round_1["blamed_ops"])
    assert set(round_1["prompt_versions"]) == {"memopt-summary-buffer.summary_buffer.summarize",  # the run's scope
                                              "memopt-summary-buffer.summary_buffer.answer"}
    assert round_1["accepted"] and summary["final"]["val_f1"] > summary["baseline"]["val_f1"]
