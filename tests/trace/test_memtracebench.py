"""MemTraceBench files (smartcomment graphs): import, scoring with the official metrics, export and round trips.

The fixtures are built with the smartcomment library (tests/memtracebench_fixtures.py), one directory per
split as MemTraceBench lays them out. smartcomment is an optional install (it declares Python >= 3.12): these
tests skip without it, and fail under CI=true, where .ci/run installs it.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import dspy
import networkx as nx
import pytest

from memopt.attribution.case import FailedCase
from memopt.attribution.evidence import seed_evidence
from memopt.attribution.methods import METHODS
from memopt.bench.attribution import MEMTRACEBENCH_SPLITS, score_memtracebench
from memopt.core.errors import ConfigError, DataError, MemoptError
from memopt.data.synth import SynthSpec, synthetic_conversations
from memopt.judge.judges import LexicalJudge
from memopt.lm.build import make_lm
from memopt.systems import make_system
from memopt.taxonomy import ERROR_TYPES
from memopt.trace import save_graph, trace, validate
from memopt.trace.memtracebench import from_memtrace, load_memtrace
from memopt.trace.smartcomment import INSTALL, to_memtrace
from tests.conftest import ROOT, SHIPPED


def _needs_smartcomment() -> None:
    if importlib.util.find_spec("smartcomment") is not None:
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI must run the MemTraceBench tests, but smartcomment is not installed ({INSTALL})")
    pytest.skip(f"smartcomment is not installed here: {INSTALL}")


@pytest.fixture(scope="module")
def bench_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture graphs, written as MemTraceBench lays them out: DIR/<split>/<graph>.json.

    They are written by a fresh interpreter: smartcomment's ``comment_*`` calls take ``inspect.stack()``, whose
    cost grows with every module loaded, and the test session has loaded hundreds (29.8 s in the suite, 1 s alone).
    """
    _needs_smartcomment()
    out = tmp_path_factory.mktemp("memtracebench")
    done = subprocess.run([sys.executable, "-m", "tests.memtracebench_fixtures", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return out


@pytest.fixture(scope="module", params=SHIPPED)
def traced(request: pytest.FixtureRequest) -> tuple[nx.DiGraph, dict[str, str]]:
    """A traced graph of one pipeline on a small synthetic conversation, and its answers."""
    _needs_smartcomment()
    conv = synthetic_conversations(SynthSpec(conversations=1, sessions=4, seed=2))[0]
    system = make_system(request.param)
    with dspy.context(lm=make_lm("sim")), trace(system) as tracer:
        system.ingest(conv)
        answers = {c.case_id: system.answer_case(c).answer for c in conv.cases}
        tracer.record_cases(conv.cases)
    return tracer.graph, answers


def _raw(bench_dir: Path) -> dict[str, list[dict]]:
    return {s: [json.loads(p.read_text()) for p in sorted((bench_dir / s).glob("*.json"))]
            for s in MEMTRACEBENCH_SPLITS}


def _edges(G: nx.DiGraph) -> set[tuple[str, str, str]]:
    return {(u, v, d["rel"]) for u, v, d in G.edges(data=True)}


# --- the fixtures are real smartcomment graphs with what the benchmark's graphs hold ------------------


def test_fixtures_are_smartcomment_graphs_of_all_four_systems(bench_dir: Path) -> None:
    from smartcomment.runtime.network import ExecNetwork

    raw = _raw(bench_dir)
    assert all(len(docs) >= 2 for docs in raw.values())
    for docs in raw.values():
        for doc in docs:
            network = ExecNetwork.import_graph(doc)
            assert network.node_count == len(doc["data"]["nodes"]) and network.edge_count == len(doc["data"]["edges"])
            assert doc["metadata"]["memtracebench_graph_filename"] and doc["data"]["annotations"]
            ops = {o["op_id"] for o in doc["data"]["operations"]}
            assert {a["final_op_id"] for a in doc["data"]["annotations"]} <= ops
    everything = [doc for docs in raw.values() for doc in docs]
    labels = Counter(a["final_error_type"] for doc in everything for a in doc["data"]["annotations"])
    assert set(ERROR_TYPES) <= set(labels) and labels["LLMJudgeError"] >= 4

    def multi_hop(doc: dict) -> bool:
        by_op: dict[str, list[dict]] = {}
        for e in doc["data"]["edges"]:
            by_op.setdefault(e["op_id"], []).append(e)
        return any({e["target_full_node_id"] for e in es} & {e["source_full_node_id"] for e in es}
                   for es in by_op.values())

    def deletes(doc: dict) -> bool:
        markers = {n["full_node_id"] for n in doc["data"]["nodes"] if n["category"] == "marker"}
        return any(e["target_full_node_id"] in markers for e in doc["data"]["edges"])

    def retrieval_reads(doc: dict) -> bool:
        first = {}
        for e in sorted(doc["data"]["edges"], key=lambda e: e["created_at"]):
            first.setdefault(e["target_full_node_id"], e["op_id"])
        retrieval = {o["op_id"] for o in doc["data"]["operations"] if o["category"] == "retrieval"}
        units = {n["full_node_id"] for n in doc["data"]["nodes"] if n["category"] == "memory_entry"}
        return any(e["op_id"] in retrieval and e["target_full_node_id"] in units and first[e["target_full_node_id"]]
                   != e["op_id"] for e in doc["data"]["edges"])

    for split, docs in raw.items():
        assert any(multi_hop(d) for d in docs), split
        assert any(retrieval_reads(d) for d in docs), split
    assert any(deletes(d) for d in raw["mem0"])


# --- import ---------------------------------------------------------------------------------------------


def test_mem0_graph_imports_with_versions_deletes_reads_and_multi_hop_ops(bench_dir: Path) -> None:
    G, annotations = load_memtrace(bench_dir / "mem0" / "conv-a.json", split="mem0")
    assert validate(G) == []
    assert G.graph["pipeline"] == "mem0" and G.graph["conversation"] == "mem0-conv-a"
    turn = G.nodes["turn:U1:D1:2@1"]
    assert turn["value"]["speaker"] == "Bob" and turn["value"]["text"].startswith("Congrats! I just started")
    first, second = G.nodes["memory:m1@1"], G.nodes["memory:m1@2"]
    assert (first["action"], second["action"]) == ("ADD", "UPDATE") and first["created"] < second["created"]
    assert "beagle puppy named Max" in json.dumps(first["value"]) and "Max" not in json.dumps(second["value"])
    deleted = G.nodes["memory:m4@2"]
    assert deleted["deleted"] is True and deleted["action"] == "DELETE"
    sc_ops = {d["sc_op_id"]: d["sc_op_name"] for _, d in G.nodes(data=True) if d["type"] == "op"}
    [delete_op] = G.predecessors("memory:m4@2")
    by_label = {a.final_error_type: a for a in annotations}
    assert G.nodes[delete_op]["sc_op_id"] == by_label["DeletionError"].final_op_id
    assert sc_ops[by_label["DeletionError"].final_op_id] == "memory_system.update_memory_decision"
    # a retrieval reads the question and existing unit versions, and writes nothing
    retrieve = "retrieve:mem0-conv-a:conv-a_q1"
    assert set(G.predecessors(retrieve)) == {"question:mem0-conv-a:conv-a_q1@1", "memory:m1@2", "memory:m2@1"}
    assert list(G.successors(retrieve)) == []
    # question answering (units → context → prediction) is two memopt ops of one smartcomment op
    fuse, answer = "fuse:mem0-conv-a:conv-a_q1", "answer:mem0-conv-a:conv-a_q1"
    assert G.nodes[fuse]["sc_op_id"] == G.nodes[answer]["sc_op_id"]
    assert list(G.successors(fuse)) == ["context:mem0-conv-a:conv-a_q1@1"]
    assert "context:mem0-conv-a:conv-a_q1@1" in G.predecessors(answer)
    assert G.nodes[fuse]["end"] <= G.nodes[answer]["start"]
    # the extraction op (messages → raw response → facts) is a chain of ops reading the turns first
    extract = [n for n, d in G.nodes(data=True) if d["type"] == "op" and d["sc_op_id"] == by_label[
        "ExtractionError"].final_op_id]
    assert len(extract) == 2 and "turn:U1:D1:2@1" in G.predecessors(sorted(extract)[0])
    assert {"U1:D1:1", "U1:D2:1"} <= set(second["sources"])
    case = {c["key"]: c for c in G.graph["cases"]}["conv-a_q2"]
    assert (case["gold"], case["evidence"]) == ("nurse", ["U1:D1:2"])
    assert [a.memory_error for a in annotations] == [True, True, True, True, False]
    assert {a.case_key for a in annotations} == {c["key"] for c in G.graph["cases"]}


def test_shared_prediction_and_context_nodes_get_one_variable_per_question(bench_dir: Path) -> None:
    G, _ = load_memtrace(bench_dir / "long_context" / "lc-a.json", split="long_context")
    keys = [c["key"] for c in G.graph["cases"]]
    assert len(keys) == 3
    for key in keys:
        assert f"answer:long_context-lc-a:{key}@1" in G and f"context:long_context-lc-a:{key}@1" in G
    versions = [n for n in G if n.startswith("memory:context@")]
    assert len(versions) == 6 and validate(G) == []


# --- scoring with the official metrics ------------------------------------------------------------------


def test_scores_per_split_with_non_memory_labels_skipped_and_counted(bench_dir: Path) -> None:
    report = score_memtracebench(bench_dir)
    raw = _raw(bench_dir)
    assert list(report["files"]) == list(MEMTRACEBENCH_SPLITS)
    for split, docs in raw.items():
        labels = [a for d in docs for a in d["data"]["annotations"]]
        memory = [a for a in labels if a["final_error_type"] in ERROR_TYPES]
        assert report["skipped_non_memory"][split] == len(labels) - len(memory)
        rows = {r["method"]: r for r in report["results"] if r["split"] == split}
        assert set(rows) == {"memtrace", "all_at_once", "step_by_step", "binary_search", "blame_response"}
        assert all(r["n"] == len(memory) for r in rows.values())
        # blame_response always says ResponseError at the answer op: its scores are the share of such labels
        response = [a for a in memory if a["final_error_type"] == "ResponseError"]
        assert rows["blame_response"]["type_accuracy"] == round(len(response) / len(memory), 3)
        assert rows["blame_response"]["op_accuracy"] == round(len(response) / len(memory), 3)
        assert rows["memtrace"]["op_accuracy"] >= 0.75 > rows["blame_response"]["op_accuracy"]


def test_bench_command_prints_one_table_per_split(bench_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-m", "memopt", "bench", "attribution", "--memtracebench", str(bench_dir),
                           "--methods", "memtrace,blame_response", "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    for split in MEMTRACEBENCH_SPLITS:
        assert f"MemTraceBench · {split}" in done.stdout and f"{split}: memory-error labels" in done.stdout
    assert "non-memory labels skipped" in done.stdout
    assert {r["method"] for r in json.loads(out.read_text())["results"]} == {"memtrace", "blame_response"}
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="no MemTraceBench files"):
        score_memtracebench(tmp_path / "empty")


# --- export and round trips -----------------------------------------------------------------------------


def test_memopt_graph_round_trips_through_a_smartcomment_graph(traced) -> None:
    from smartcomment.runtime.network import ExecNetwork

    G, _ = traced
    doc = json.loads(json.dumps(to_memtrace(G)))
    network = ExecNetwork.import_graph(doc)
    assert network.node_count >= sum(1 for _, d in G.nodes(data=True) if d["type"] == "variable")
    assert network.op_count == sum(1 for _, d in G.nodes(data=True) if d["type"] == "op")
    H, annotations = from_memtrace(doc)
    assert dict(H.nodes(data=True)) == dict(G.nodes(data=True))
    assert _edges(H) == _edges(G) and H.graph == G.graph and validate(H) == []
    assert [a.case_key for a in annotations] == [c["key"] for c in G.graph["cases"]]


def test_export_uses_memtraces_conventions(traced) -> None:
    G, _ = traced
    doc = to_memtrace(G)
    nodes = {n["full_node_id"]: n for n in doc["data"]["nodes"]}
    queries = [n for n in nodes.values() if n["class_name"] == "query"]
    assert queries and all(n["category"] == "message & query" for n in queries)
    evidence = {name for q in queries for name in q["metadata"]["evidence"]}
    assert evidence and all(f"{name}@1" in nodes and nodes[f"{name}@1"]["category"] == "message" for name in evidence)
    predictions = {n["full_node_id"] for n in nodes.values() if n["class_name"] == "prediction"}
    answered = {e["source_full_node_id"] for e in doc["data"]["edges"] if e["target_full_node_id"] in predictions}
    assert {q["full_node_id"] for q in queries} <= answered  # the annotation interface's query → prediction link
    assert {o["category"] for o in doc["data"]["operations"]} >= {"retrieval", "evaluation"}
    units = [n for n in nodes.values() if n["category"] == "memory_entry"]
    assert G.graph["pipeline"] == "long_context" or units
    assert all(a["final_error_type"] is None for a in doc["data"]["annotations"])


@pytest.mark.parametrize("traced", ["mem0"], indirect=True)
def test_deleted_units_export_as_edges_to_a_marker(traced) -> None:
    G, _ = traced
    deleted = [n for n, d in G.nodes(data=True) if d.get("deleted")]
    doc = to_memtrace(G)
    markers = {n["full_node_id"] for n in doc["data"]["nodes"] if n["category"] == "marker"}
    into = [e for e in doc["data"]["edges"] if e["target_full_node_id"] in markers]
    assert len(markers) == len(deleted) == len(into)
    for e in into:
        assert G.nodes[e["op_id"]]["operation"] == "update"


def test_without_memopts_metadata_the_import_reads_the_same_structure(traced) -> None:
    """A foreign tool's view: strip memopt's metadata; the import must rebuild what attribution needs."""
    G, answers = traced
    doc = json.loads(json.dumps(to_memtrace(G)))
    for item in doc["data"]["nodes"] + doc["data"]["operations"]:
        item["metadata"].pop("memopt", None)
    doc["metadata"].pop("memopt")
    K, _ = from_memtrace(doc)
    assert validate(K) == []
    assert Counter(d["type"] for _, d in K.nodes(data=True)) == Counter(d["type"] for _, d in G.nodes(data=True))
    assert len(K.graph["cases"]) == len(G.graph["cases"])
    judge, cases = LexicalJudge(), {c["question"]: c for c in K.graph["cases"]}
    compared = 0
    for c in G.graph["cases"]:
        prediction = answers[c["case_id"]]
        if judge.correct(c["question"], c["gold"], prediction):
            continue
        given, _ = seed_evidence(G, c["question"], c["gold"], tuple(c["evidence"]))
        ours = METHODS["memtrace"](FailedCase(G, c["case_id"], c["question"], c["gold"], given, prediction), judge)
        k = cases[c["question"]]
        evidence, pseudo = seed_evidence(K, c["question"], c["gold"], tuple(k["evidence"]))
        theirs = METHODS["memtrace"](FailedCase(K, k["case_id"], c["question"], c["gold"], evidence, prediction), judge)
        assert not pseudo
        assert (theirs.error_type, K.nodes[theirs.op_id]["sc_op_id"]) == (ours.error_type, ours.op_id), c["case_id"]
        compared += 1
    assert compared >= 5


@pytest.mark.parametrize("traced", ["mem0"], indirect=True)
def test_attributions_become_annotations(traced) -> None:
    G, _ = traced
    first = G.graph["cases"][0]
    blamed = next(n for n, d in G.nodes(data=True) if d.get("operation") == "extract")
    doc = to_memtrace(G, {first["case_id"]: ("ExtractionError", blamed)})
    _, annotations = from_memtrace(doc)
    assert (annotations[0].final_error_type, annotations[0].final_op_id) == ("ExtractionError", blamed)
    assert annotations[0].memory_error and not annotations[1].memory_error
    for attributions, message in [({first["case_id"]: ("Oops", blamed)}, "not one of"),
                                  ({first["case_id"]: ("UpdateError", "nope")}, "no operation"),
                                  ({"other:q1": ("UpdateError", blamed)}, "not in the graph")]:
        with pytest.raises(ValueError, match=message):
            to_memtrace(G, attributions)


def test_attribute_writes_annotated_smartcomment_graphs(tmp_path: Path) -> None:
    _needs_smartcomment()
    from memopt.attribution.types import load_attributions
    from memopt.evaluate.pipeline import run_pipeline

    result = run_pipeline("mem0", "synthetic:conversations=1,sessions=3,seed=5", judge_lm="sim",
                          trace_dir=tmp_path / "graphs")
    result.save(tmp_path / "results.json")
    done = subprocess.run([sys.executable, "-m", "memopt", "attribute", "--results", "results.json", "--trace",
                           "graphs", "--out", "attributions.jsonl", "--memtracebench-out", "mtb"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    found = load_attributions(tmp_path / "attributions.jsonl")
    [path] = (tmp_path / "mtb").glob("*.json")
    G, annotations = load_memtrace(path)
    labelled = {f"{G.graph['conversation']}:{a.case_key}": (a.final_error_type, a.final_op_id)
                for a in annotations if a.memory_error}
    assert found and labelled == {a.case_id: (a.error_type, a.op_id) for a in found}
    assert len(annotations) == len(G.graph["cases"]) > len(labelled)


def test_show_opens_both_formats(bench_dir: Path, tmp_path: Path) -> None:
    from memopt.trace.memtracebench import open_graph

    G, _ = load_memtrace(bench_dir / "rag" / "rag-a.json")
    ours = save_graph(G, tmp_path / "ours.json")
    assert _edges(open_graph(ours)) == _edges(open_graph(bench_dir / "rag" / "rag-a.json")) == _edges(G)
    out = tmp_path / "view.html"
    done = subprocess.run([sys.executable, "-m", "memopt", "show", str(bench_dir / "rag" / "rag-a.json"), "--case",
                           "rag-a_q1", "--out", str(out)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "case view" in done.stdout and "answer:rag-rag-a:rag-a_q1@1" in out.read_text()
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"samples": []}))
    with pytest.raises(DataError, match=f"{other}: neither a memopt evolution graph"):
        open_graph(other)


# --- errors ---------------------------------------------------------------------------------------------


def _doc(bench_dir: Path) -> dict:
    return json.loads((bench_dir / "rag" / "rag-b.json").read_text())


def _break(doc: dict, where: str) -> None:
    data = doc["data"]
    if where == "no data":
        del doc["data"]
    elif where == "nodes not a list":
        data["nodes"] = {}
    elif where == "value not a string":
        data["nodes"][2]["value"] = ["not", "a", "string"]
    elif where == "bad timestamp":
        data["nodes"][1]["created_at"] = "yesterday"
    elif where == "dangling edge":
        data["edges"][0]["target_full_node_id"] = "nowhere@1"
    elif where == "annotation op":
        data["annotations"][0]["final_op_id"] = "op-nope"
    elif where == "annotation query":
        data["annotations"][0]["query"] = 7
    elif where == "annotations not a list":
        data["annotations"] = {}


BROKEN = [("no data", "not a smartcomment execution graph"), ("nodes not a list", "data.nodes: expected a list"),
          ("value not a string", "data.nodes[2].value: Input should be a valid string"),
          ("bad timestamp", "data.nodes[1].created_at:"), ("dangling edge", "Target node 'nowhere@1' is not found"),
          ("annotation op", "data.annotations[0].final_op_id: 'op-nope' is not an op_id"),
          ("annotation query", "data.annotations[0].query: got int"),
          ("annotations not a list", "data.annotations: expected a list")]


@pytest.mark.parametrize(("where", "message"), BROKEN, ids=[b[0] for b in BROKEN])
def test_malformed_files_get_one_error_naming_file_and_place(bench_dir: Path, tmp_path: Path, where: str,
                                                             message: str) -> None:
    doc = _doc(bench_dir)
    _break(doc, where)
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(DataError) as err:
        load_memtrace(path)
    assert str(err.value).startswith(f"{path}: ") and message in str(err.value)


def test_fuzzed_graphs_load_or_give_one_error_naming_the_file(bench_dir: Path) -> None:
    """Type changes, categories and classes swapped, edges re-pointed: never a traceback, only a MemoptError."""
    docs = [doc for split in _raw(bench_dir).values() for doc in split]
    values = [None, 0, "", "marker", "memory_entry", "message", "query", "prediction", "memory_context",
              "message & query", "retrieval", "extraction", "evaluation", "llm_response", "DELETED", [], {}]
    fields = ["category", "class_name", "value", "op_id", "source_full_node_id", "target_full_node_id",
              "created_at", "version", "name", "metadata", "final_op_id", "query_id"]
    rng, loaded = random.Random(7), 0
    for _ in range(60):
        doc = copy.deepcopy(rng.choice(docs))
        for _ in range(rng.randint(1, 4)):
            section = rng.choice(["nodes", "edges", "operations", "annotations"])
            item = rng.choice(doc["data"][section])
            if section == "edges" and rng.random() < 0.3:
                end = rng.choice(["source_full_node_id", "target_full_node_id"])
                item[end] = rng.choice(doc["data"]["nodes"])["full_node_id"]
            else:
                item[rng.choice(fields)] = rng.choice(values)
        try:
            from_memtrace(doc, source="fuzzed.json")
            loaded += 1
        except MemoptError as e:
            assert str(e).startswith("fuzzed.json: "), e
    assert 10 < loaded < 55


def test_a_memopt_graph_is_not_taken_for_a_memtracebench_file(traced, tmp_path: Path) -> None:
    G, _ = traced
    path = save_graph(G, tmp_path / "g.json")
    with pytest.raises(DataError, match="memopt evolution graph: open it with `memopt show`"):
        load_memtrace(path)


def test_without_smartcomment_the_error_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "smartcomment", None)
    with pytest.raises(ConfigError) as err:
        from_memtrace({"graph_id": "g", "data": {}})
    assert "pip install --no-deps --ignore-requires-python smartcomment==0.1.2" in str(err.value)
    assert '.[memtracebench]' in str(err.value)
