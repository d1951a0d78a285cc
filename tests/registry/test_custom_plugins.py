"""An attribution method and a feedback kind from outside memopt (examples/custom_attribution,
examples/custom_feedback): built and installed as packages, found by their entry points, listed by
`memopt plugins`, and used by name through `memopt attribute --method`, the experiment validation and
`memopt optimize --feedback`, with no line of memopt knowing them."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

# Each test builds and installs real distributions (pip, entry points): slow tests, which CI runs with -m slow.
pytestmark = pytest.mark.slow

EXAMPLES = {"custom_attribution": "earliest_llm|memopt_custom_attribution",
            "custom_feedback": "error_counts|memopt_custom_feedback"}
SMALL = "synthetic:conversations=3,sessions=6,seed=11"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """Both example packages built from their pyproject and installed into one directory of their own, offline."""
    tmp = tmp_path_factory.mktemp("plugins")
    target = tmp / "site"
    for name in EXAMPLES:
        source = tmp / name
        shutil.copytree(ROOT / "examples" / name, source,
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
        done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                               "--no-index", "--target", str(target), str(source)], capture_output=True, text=True,
                              timeout=300)
        if done.returncode != 0:
            pytest.fail(f"could not build examples/{name} (needs setuptools>=70.1, in the dev extra):\n"
                        f"{done.stderr[-2000:]}")
    return target


def _env(site: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}


def memopt(*args: str, site: Path, cwd: Path, code: int = 0) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "memopt", *args], capture_output=True, text=True, timeout=600,
                          cwd=cwd, env=_env(site))
    assert done.returncode == code, done.stderr[-3000:]
    return done


@pytest.fixture(scope="module")
def traced(site, tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("traced")
    memopt("run", "-p", "mem0", "--data", SMALL, "--out", "results.json", "--trace", "graphs", site=site, cwd=tmp)
    return tmp


def test_memopt_knows_nothing_of_the_examples():
    for pattern in EXAMPLES.values():
        assert [str(p.relative_to(ROOT)) for p in (ROOT / "memopt").rglob("*.py") if re.search(pattern,
                                                                                               p.read_text())] == []


def test_each_example_is_one_file_of_code():
    for name, pattern in EXAMPLES.items():
        package = ROOT / "examples" / name / pattern.split("|")[1]
        code = [p.name for p in package.glob("*.py") if p.name != "__init__.py"]
        assert len(code) == 1 and (package / "__init__.py").read_text().count("\n") == 1


def test_plugins_lists_both_with_their_distribution(site, tmp_path):
    out = memopt("plugins", site=site, cwd=tmp_path).stdout
    assert re.search(r"attribution method.*earliest_llm.*memopt-custom-attribution", out)
    assert re.search(r"feedback kind.*error_counts.*uses attribution.*memopt-custom-feedback", out)
    assert re.search(r"memory system.*mem0", out) and re.search(r"feedback kind.*outcome.*round-robin ops", out)
    only = memopt("plugins", "--kind", "feedback", site=site, cwd=tmp_path).stdout
    assert "error_counts" in only and "earliest_llm" not in only


def test_the_method_blames_by_name_the_earliest_llm_op(site, traced):
    memopt("attribute", "--results", "results.json", "--trace", "graphs", "--method", "earliest_llm",
           "--out", "earliest.jsonl", site=site, cwd=traced)
    memopt("attribute", "--results", "results.json", "--trace", "graphs", "--out", "memtrace.jsonl",
           site=site, cwd=traced)
    mine = [json.loads(line) for line in (traced / "earliest.jsonl").read_text().splitlines()]
    theirs = [json.loads(line) for line in (traced / "memtrace.jsonl").read_text().splitlines()]
    assert mine and [a["case_id"] for a in mine] == [a["case_id"] for a in theirs]
    assert {a["method"] for a in mine} == {"earliest_llm"} and all(a["judge_calls"] == 0 for a in mine)
    assert {a["operation"] for a in mine} <= {"extract", "update", "answer"}  # mem0's LLM ops
    assert [a["op_id"] for a in mine] != [a["op_id"] for a in theirs]


def test_an_unknown_method_names_the_installed_ones(site, traced):
    done = memopt("attribute", "--results", "results.json", "--trace", "graphs", "--method", "dowsing",
                  site=site, cwd=traced, code=2)
    assert "dowsing" in done.stderr and "earliest_llm" in done.stderr and "Traceback" not in done.stderr


SCRIPT = """
import json, sys
from memopt.attribution.case import failed_cases
from memopt.attribution.methods import attribute
from memopt.evaluate.run import RunResult
from memopt.optimize.experiment import load_experiment
from memopt.feedback.kinds import FeedbackRequest, get_kind
from memopt.judge.judges import LexicalJudge
from memopt.trace import load_graph


experiment = load_experiment(sys.argv[1], {"optimizer.feedback": "error_counts", "attribution.method": "earliest_llm"})
run = RunResult.load("results.json")
by_id = {c.case_id: c.to_dict() for c in run.cases}
blamed = [(c, attribute(c, LexicalJudge(), experiment.attribution.method))
          for path in sorted(__import__("pathlib").Path("graphs").glob("*.json*"))
          for c in failed_cases(load_graph(path), by_id)]
kind = get_kind(experiment.optimizer.feedback_kind)
feedback = kind(FeedbackRequest(blamed, {"extract": ("extract",), "update": ("update",), "answer": ("answer",)},
                                [], {}))
print(json.dumps({"uses_attribution": kind.uses_attribution, "methods": sorted({a.method for _, a in blamed}),
                  "text": {op: fb.text() for op, fb in feedback.items()}}))
"""


def test_an_experiment_names_both_and_the_kind_writes_counts_only(site, traced):
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(ROOT / "experiments" / "quickstart.yaml")],
                          capture_output=True, text=True, timeout=300, cwd=traced, env=_env(site))
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.splitlines()[-1])
    assert found["uses_attribution"] is True and found["methods"] == ["earliest_llm"]
    assert found["text"] and all(re.fullmatch(r"\d+ failed answers were blamed on this operation \(.+\), with prompt "
                                              r"version [0-9a-f]+\.", text) for text in found["text"].values())


@pytest.mark.slow  # ≈ 20-60 s: MLflow's store and a full round
def test_one_round_of_optimize_with_the_plugin_kind_and_method(site, tmp_path):
    text = (ROOT / "experiments" / "quickstart.yaml").read_text().replace("conversations=12,sessions=8",
                                                                         "conversations=4,sessions=6")
    (tmp_path / "small.yaml").write_text(text)
    memopt("optimize", "small.yaml", "--rounds", "1", "--feedback", "error_counts", "--attribution", "earliest_llm",
           "--tracking-uri", f"sqlite:///{tmp_path / 'mlflow.db'}", "--out", "summary.json", site=site, cwd=tmp_path)
    summary = json.loads((tmp_path / "summary.json").read_text())
    [round_1] = summary["rounds"]
    assert round_1["blamed_ops"]
    import mlflow

    client = mlflow.MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    parent = client.get_run(summary["run_id"])
    assert parent.data.params["optimizer.feedback"] == "error_counts"
    assert parent.data.params["optimizer.attribution"] == "earliest_llm"
    assert parent.info.run_name.startswith("quickstart-memtrace-error_counts-")  # a control: named in the run
    [one] = client.search_runs([parent.info.experiment_id], filter_string=f"tags.mlflow.parentRunId = "
                               f"'{summary['run_id']}' and tags.memopt.round = '1'")
    text = Path(client.download_artifacts(one.info.run_id, "feedback.md", str(tmp_path))).read_text()
    sections = re.findall(r"^# (\w+)\n\n(.*)$", text, flags=re.M)
    assert sections and {op for op, _ in sections} <= {"extract", "update", "answer"}
    assert all(re.fullmatch(r"\d+ failed answers were blamed on this operation \(.+\), with prompt version "
                            rf"prompts:/memopt-quickstart\.mem0\.{op}/\d+\.",
                            body) for op, body in sections)
