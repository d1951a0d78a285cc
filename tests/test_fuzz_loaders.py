"""Fuzz the loaders of every input file: a mutated file is loaded or refused with one `MemoptError`, never more.

The mutations (`tests.fuzz`) are seeded: a failure names the mutation, and reruns reproduce it.
"""

from __future__ import annotations

import json
import random

import pytest

from memopt.core.errors import ConfigError
from memopt.data.locomo import load_locomo, to_locomo
from memopt.data.synth import SynthSpec, synthetic_conversations
from tests.fuzz import check_inputs, check_loader

SPEC = SynthSpec(conversations=2, sessions=2, seed=3, questions_per_conversation=5)


@pytest.fixture(scope="module")
def locomo_doc() -> list[dict]:
    return [to_locomo(c) for c in synthetic_conversations(SPEC)]


def test_locomo_loader_survives_truncation_and_type_changes(locomo_doc, tmp_path):
    counts = check_loader(load_locomo, locomo_doc, tmp_path, n=500, seed=1)
    assert counts["loaded"] >= 50 and counts["refused"] >= 200, counts  # the mutations reach both outcomes


def test_locomo_loader_on_the_shared_dev_file(locomo_dev, tmp_path):
    doc = json.loads(locomo_dev.read_text())[:1]
    conversation = doc[0]["conversation"]
    doc[0]["conversation"] = {k: v for k, v in conversation.items() if not k.startswith("session_")
                              or k.split("_")[1] in ("1", "2")}
    doc[0]["qa"] = doc[0]["qa"][:10]
    counts = check_loader(load_locomo, doc, tmp_path, n=120, seed=2)
    assert counts["refused"] >= 30, counts


def test_synthetic_spec_parser_never_raises_anything_but_one_error():
    from memopt.data.source import parse_synth_spec

    rng = random.Random(4)
    parts = ["conversations", "sessions", "seed", "questions_per_conversation", "bogus", "=", ",", ":", "-", "0", "1",
             "12", "9" * 30, "9" * 5000, " ", "synthetic", "", "x"]

    def specs():
        for _ in range(400):
            text = "synthetic:" + "".join(rng.choice(parts) for _ in range(rng.randrange(1, 9)))
            yield text[:80], text

    counts = check_inputs(parse_synth_spec, specs(), must_name="synthetic")
    assert counts["loaded"] >= 5 and counts["refused"] >= 200, counts


def test_results_graph_and_experiment_loaders_survive_mutations(tmp_path):
    from memopt.evaluate.pipeline import run_pipeline
    from memopt.evaluate.run import RunResult
    from memopt.optimize.experiment import load_experiment
    from memopt.trace.io import load_graph
    from memopt.trace.render import graph_view

    run_pipeline("rag", SPEC.describe(), judge_lm=None, limit=6, trace_dir=tmp_path / "trace").save(tmp_path / "r.json")
    results = json.loads((tmp_path / "r.json").read_text())
    assert check_loader(RunResult.load, results, tmp_path, n=200, seed=5)["refused"] >= 50
    graph = json.loads(next((tmp_path / "trace").glob("*.json")).read_text())
    counts = check_loader(lambda path: graph_view(load_graph(path)), graph, tmp_path, n=150, seed=6)
    assert counts["loaded"] >= 25 and counts["refused"] >= 25, counts
    experiment = {"name": "fuzz", "pipeline": "rag", "data": {"source": "synthetic", "split": [0.5, 0.25, 0.25]},
                  "optimizer": {"name": "memtrace", "candidates": 2, "search": {"top_k": [3, 5]}}, "rounds": 2,
                  "knobs": {"top_k": 4}, "mlflow": {"experiment": "x"}}
    counts = check_loader(load_experiment, experiment, tmp_path, n=300, seed=7, name="exp.yaml")
    assert counts["loaded"] >= 20 and counts["refused"] >= 100, counts
    # the command line's overrides go into sections the mutations may have made scalars or lists (`budget: 5`)
    overrides = {"budget.max_lm_calls": 300, "optimizer.name": "memtrace", "lm.judge": "sim",
                 "mlflow.tracking_uri": "sqlite:///x.db", "data.source": "synthetic", "rounds": 1}
    counts = check_loader(lambda path: load_experiment(path, overrides), experiment, tmp_path, n=300, seed=8,
                          name="exp.yaml")
    assert counts["loaded"] >= 20 and counts["refused"] >= 100, counts
    for section in ("budget: 5", "data: [1, 2]", "optimizer: memtrace", "mlflow: x", "lm: sim"):
        bad = tmp_path / "scalar.yaml"
        bad.write_text(f"name: x\npipeline: rag\n{section}\n")
        key = section.split(":")[0]
        with pytest.raises(ConfigError, match=rf"scalar.yaml: {key}: must be a mapping of keys .*override of {key}\."):
            load_experiment(bad, overrides)


@pytest.mark.slow  # over 2 s on a quiet machine (CI runs it with -m slow)
def test_attribution_of_mutated_graphs_and_results_gives_one_clear_error(tmp_path):
    """Past loading: a graph or results file that loads is attributed, or refused with one error naming it.

    The graph loader once checked only the shape of nodes and edges, so a node without its ``name``, a case whose
    ``gold`` is a number, an op declaration that is a string or ``"directed": null`` raised a bare KeyError,
    TypeError or AttributeError inside attribution.
    """
    from memopt.attribution.attribute_run import attribute_run
    from memopt.evaluate.pipeline import run_pipeline
    from memopt.evaluate.run import RunResult
    from memopt.judge.judges import make_judge

    trace = tmp_path / "trace"
    run_pipeline("mem0", SPEC.describe(), judge_lm=None, limit=10, trace_dir=trace).save(tmp_path / "r.json")
    run = RunResult.load(tmp_path / "r.json")
    judge = make_judge("lexical")
    graph_file = next(trace.glob("*.json"))
    graph = json.loads(graph_file.read_text())
    failed = attribute_run(run, trace, judge, method="memtrace")
    assert failed, "the run has failed cases to attribute"

    counts = check_loader(lambda _: attribute_run(run, trace, judge, method="memtrace"), graph, trace, n=250,
                          seed=8, name=graph_file.name)
    assert counts["loaded"] >= 40 and counts["refused"] >= 40, counts
    results = json.loads((tmp_path / "r.json").read_text())
    graph_file.write_text(json.dumps(graph), encoding="utf-8")
    counts = check_loader(lambda path: attribute_run(RunResult.load(path), trace, judge, method="memtrace",
                                                          source=str(path)), results,
                          tmp_path, n=150, seed=9, name="fuzzed-results.json")
    assert counts["loaded"] >= 20 and counts["refused"] >= 20, counts


def _first(nodes: list[dict], kind: str) -> dict:
    return next(n for n in nodes if n["type"] == "variable" and n["kind"] == kind)


@pytest.mark.parametrize(("damage", "names"), [
    (lambda g: g.update(directed=None), "directed / multigraph"),
    (lambda g: _first(g["nodes"], "memory").pop("name"), ".name: missing"),
    (lambda g: _first(g["nodes"], "turn").update(value=True), ".value: expected {speaker, text"),
    (lambda g: next(n for n in g["nodes"] if n["type"] == "op").update(start="x"), ".start: expected int or float"),
    (lambda g: g["graph"]["cases"][0].update(gold=1.5), "graph.cases[0] (synth-3-000:q0).gold: expected str"),
    (lambda g: g["graph"]["operations"].update(extract="x"), "graph.operations.extract: expected an object"),
], ids=["undirected", "nameless-memory", "turn-value", "op-start", "numeric-gold", "op-declaration"])
def test_a_damaged_graph_field_is_named(tmp_path, damage, names):
    from memopt.core.errors import DataError
    from memopt.evaluate.pipeline import run_pipeline
    from memopt.trace.io import load_graph

    trace = tmp_path / "trace"
    run_pipeline("mem0", SPEC.describe(), judge_lm=None, limit=10, trace_dir=trace)
    path = next(trace.glob("*.json"))
    graph = json.loads(path.read_text())
    load_graph(path)
    damage(graph)
    path.write_text(json.dumps(graph), encoding="utf-8")
    with pytest.raises(DataError) as err:
        load_graph(path)
    assert names in str(err.value) and str(path) in str(err.value) and "memopt run --trace" in str(err.value)
