"""MemTrace JSON: import of a hand-written foreign file, memopt → MemTrace → memopt round trips, error messages."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import dspy
import networkx as nx
import pytest

from memopt.data.synth import SynthSpec, synthetic_conversations
from memopt.errors import DataError
from memopt.lm.config import make_lm
from memopt.systems import make_system
from memopt.trace import answer_of, derived_from_turn, ops, ops_in_order, trace, validate
from memopt.trace.memtrace import Annotation, from_memtrace, load_memtrace, save_memtrace, to_memtrace
from tests.conftest import SHIPPED

FIXTURE = Path(__file__).parent / "fixtures" / "memtrace_small.json"


@pytest.fixture(scope="module", params=SHIPPED)
def traced(request: pytest.FixtureRequest) -> nx.DiGraph:
    """A freshly traced graph of one pipeline on a small synthetic conversation."""
    conv = synthetic_conversations(SynthSpec(conversations=1, sessions=4, seed=2))[0]
    system = make_system(request.param)
    with dspy.context(lm=make_lm("sim")), trace(system) as tracer:
        system.ingest(conv)
        for case in conv.cases:
            system.answer_case(case)
        tracer.record_cases(conv.cases)
    return tracer.graph


def _edges(G: nx.DiGraph) -> set[tuple[str, str, str]]:
    return {(u, v, d["rel"]) for u, v, d in G.edges(data=True)}


# --- the hand-written foreign file ---------------------------------------------------------------


def test_fixture_is_in_the_foreign_shape() -> None:
    raw = json.loads(FIXTURE.read_text(encoding="utf-8"))
    assert isinstance(raw["graph_data"], str)
    body = json.loads(raw["graph_data"])["data"]
    assert "links" in body and "edges" not in body
    assert body["annotations"][0]["golden_answers"] == "Max"


def test_import_fixture_nodes_and_edges() -> None:
    G, _ = load_memtrace(FIXTURE)
    kinds = Counter(d["kind"] for _, d in G.nodes(data=True) if d["type"] == "variable")
    assert kinds == {"turn": 6, "memory": 5, "fact": 2, "query": 1, "context": 1, "answer": 1}
    assert ops_in_order(G) == ["op_1", "op_2", "op_3", "op_4", "op_5"]
    assert G.number_of_edges() == 25
    assert validate(G) == []

    turn = G.nodes["turn:D1:1@1"]
    assert (turn["name"], turn["version"], turn["memtrace_id"], turn["category"]) == (
        "turn:D1:1", 1, "D1:1@1", "dialogue")
    assert turn["created_at"] == "2023-05-06T10:02:11"
    updated = G.nodes["memory:mem_1@2"]
    assert (updated["kind"], updated["name"], updated["version"]) == ("memory", "memory:mem_1", 2)
    assert updated["value"] == "Alice's sister looks after Alice's dog on weekends"
    assert (updated["event"], updated["class_name"]) == ("UPDATE", "MemoryItem")
    assert G.nodes["context:ctx_1@1"]["value"][1] == "Alice works as a nurse"

    assert G.edges["fact:f_1@1", "op_3"]["rel"] == "read"
    assert G.edges["op_3", "memory:mem_1@2"]["rel"] == "write"
    assert {d["op_kind"] for n, d in G.nodes(data=True) if d["type"] == "op" and n != "op_4"} == {"llm"}
    assert G.nodes["op_4"]["op_kind"] == "tool"
    assert (G.nodes["op_3"]["operation"], G.nodes["op_3"]["category"]) == ("memory_update", "update")
    assert G.nodes["op_1"]["latency_ms"] == 1840
    old, op, new = G.nodes["memory:mem_1@1"], G.nodes["op_3"], G.nodes["memory:mem_1@2"]
    assert old["created"] < op["start"] < new["created"] <= op["end"]
    steps = ops_in_order(G)
    assert all(G.nodes[a]["end"] < G.nodes[b]["start"] for a, b in zip(steps, steps[1:], strict=False))
    assert {"memory:mem_1@1", "memory:mem_1@2", "answer:ans_1@1"} <= derived_from_turn(G, "D1:1")


def test_import_fixture_annotation_and_cases() -> None:
    G, annotations = load_memtrace(FIXTURE)
    assert annotations == [Annotation(
        query_id="conv-7_q1", query="What is the name of Alice's dog?", golden_answers=("Max",),
        prediction="The name of Alice's dog is not mentioned.", source_evidence_ids=("D1:1",),
        final_error_type="UpdateError", final_op_id="op_3",
    )]
    assert G.graph["cases"] == [{"case_id": "conv-7_q1", "key": "conv-7_q1", "question": annotations[0].query,
                                 "gold": "Max", "evidence": ["D1:1"], "category": None}]
    assert G.graph["memory_system"] == "mem0"


def test_reexport_of_fixture_writes_back_its_ids_and_categories() -> None:
    G, annotations = load_memtrace(FIXTURE)
    source = json.loads(json.loads(FIXTURE.read_text(encoding="utf-8"))["graph_data"])["data"]
    doc = to_memtrace(G, {a.query_id: (a.final_error_type, a.final_op_id) for a in annotations})["graph_data"]["data"]
    assert {v["full_node_id"]: (v["class_name"], v["category"], v["value"]) for v in doc["variables"]} == {
        v["full_node_id"]: (v["class_name"], v["category"], v["value"]) for v in source["variables"]}
    assert {(o["op_id"], o["name"], o["category"]) for o in doc["operations"]} == {
        (o["op_id"], o["name"], o["category"]) for o in source["operations"]}
    assert {(e["source"], e["target"], e["type"]) for e in doc["edges"]} == {
        (e["source"], e["target"], e["type"]) for e in source["links"]}
    assert (doc["annotations"][0]["final_error_type"], doc["annotations"][0]["final_op_id"]) == ("UpdateError", "op_3")


# --- memopt → MemTrace → memopt ------------------------------------------------------------------


def test_round_trip_keeps_every_op_variable_and_edge(traced: nx.DiGraph) -> None:
    G = traced
    H, annotations = from_memtrace(json.loads(json.dumps(to_memtrace(G))))
    assert set(H) == set(G)
    assert _edges(H) == _edges(G)
    for n, d in G.nodes(data=True):
        keys = ("type", "kind", "name", "version", "value", "created") if d["type"] == "variable" else (
            "type", "operation", "op_kind", "start", "end", "inputs", "output", "prompt_version")
        assert {k: H.nodes[n][k] for k in keys} == {k: d[k] for k in keys}, n
    assert dict(H.nodes(data=True)) == dict(G.nodes(data=True))
    assert H.graph == G.graph
    assert validate(H) == []
    assert [a.query_id for a in annotations] == [c["case_id"] for c in G.graph["cases"]]
    assert all(a.golden_answers == (c["gold"],) for a, c in zip(annotations, G.graph["cases"], strict=True))


def test_export_shape(traced: nx.DiGraph) -> None:
    G = traced
    data = to_memtrace(G)["graph_data"]
    body = data["data"]
    assert [v["full_node_id"] for v in body["variables"]] == sorted(
        (n for n, d in G.nodes(data=True) if d["type"] == "variable"), key=lambda n: G.nodes[n]["created"])
    for v in body["variables"]:
        d = G.nodes[v["full_node_id"]]
        assert (v["category"], v["created_at"], v["value"]) == (d["kind"], d["created"], d["value"])
        assert v["metadata"]["version"] == d["version"]
        assert ("action" in v["metadata"]) == ("action" in d)
    classes = {v["category"]: v["class_name"] for v in body["variables"]}
    assert classes["turn"] == "DialogueTurn" and classes["answer"] == "Answer" and classes["context"] == "Context"
    category = {o["name"]: o["category"] for o in body["operations"]}
    assert category["answer"] == "response"
    expected = {"extract": "extraction", "update": "update", "retrieve": "retrieval", "chunk": "extraction",
                "truncate": "retrieval", "rewrite_query": "retrieval", "segment": "extraction", "fuse": "retrieval"}
    assert {k: category[k] for k in expected if k in category} == {k: v for k, v in expected.items() if k in category}
    assert {e["type"] for e in body["edges"]} == {"read", "write"}
    assert data["meta"]["pipeline"] == G.graph["pipeline"] and data["meta"]["simulated"] is True
    assert "cases" not in data["meta"]
    for a, case in zip(body["annotations"], G.graph["cases"], strict=True):
        answer = answer_of(G, case["key"])
        assert a["prediction"] == G.nodes[answer]["value"]
        assert (a["final_error_type"], a["final_op_id"]) == (None, None)


@pytest.mark.parametrize("traced", ["mem0"], indirect=True)
def test_mem0_store_units_export_as_memory_units(traced: nx.DiGraph) -> None:
    body = to_memtrace(traced)["graph_data"]["data"]
    memories = [v for v in body["variables"] if v["category"] == "memory"]
    assert memories and {v["class_name"] for v in memories} == {"MemoryUnit"}
    assert all(v["metadata"]["action"] in ("ADD", "UPDATE", "DELETE") and v["metadata"]["sources"] for v in memories)


def test_attributions_fill_annotations(traced: nx.DiGraph) -> None:
    G = traced
    first, second = G.graph["cases"][:2]
    blamed = ops(G, "answer")[0]
    annotations = to_memtrace(G, {first["case_id"]: ("ResponseError", blamed)})["graph_data"]["data"]["annotations"]
    by_id = {a["query_id"]: a for a in annotations}
    assert (by_id[first["case_id"]]["final_error_type"], by_id[first["case_id"]]["final_op_id"]) == (
        "ResponseError", blamed)
    assert by_id[second["case_id"]]["final_error_type"] is None
    _, imported = from_memtrace(to_memtrace(G, {first["case_id"]: ("ResponseError", blamed)}))
    assert imported[0].final_op_id == blamed
    with pytest.raises(ValueError, match="not one of"):
        to_memtrace(G, {first["case_id"]: ("Oops", blamed)})
    with pytest.raises(ValueError, match="no operation"):
        to_memtrace(G, {first["case_id"]: ("ResponseError", "answer:nowhere")})
    with pytest.raises(ValueError, match="not in the graph"):
        to_memtrace(G, {"other:q9": ("ResponseError", blamed)})


def test_save_and_load(traced: nx.DiGraph, tmp_path: Path) -> None:
    path = save_memtrace(traced, tmp_path / "out" / "graph.json")
    G, annotations = load_memtrace(path)
    assert dict(G.nodes(data=True)) == dict(traced.nodes(data=True))
    assert _edges(G) == _edges(traced)
    assert len(annotations) == len(traced.graph["cases"])


# --- tolerance and errors ------------------------------------------------------------------------


def _doc() -> dict:
    return {"graph_data": {"data": {
        "variables": [
            {"full_node_id": "turn:D1:1@1", "category": "turn", "value": "Ann: I adopted a cat."},
            {"full_node_id": "memory:m1@1", "category": "memory", "value": "Ann adopted a cat"},
        ],
        "operations": [{"op_id": "extract:c:S1", "name": "extract", "category": "extraction"}],
        "edges": [{"source": "turn:D1:1@1", "target": "extract:c:S1", "type": "read"},
                  {"source": "extract:c:S1", "target": "memory:m1@1", "type": "write"}],
        "annotations": [{"query_id": "c:q0", "query": "What did Ann adopt?", "golden_answers": ["a cat"],
                         "prediction": "a cat", "source_evidence_ids": ["D1:1"], "final_error_type": None,
                         "final_op_id": None}],
    }}}


def test_tolerated_variants_read_the_same() -> None:
    G, annotations = from_memtrace(_doc())
    variant = _doc()
    body = variant["graph_data"]["data"]
    body["links"] = [{k: v for k, v in e.items() if k != "type"} for e in body.pop("edges")]
    body["annotations"][0]["golden_answers"] = "a cat"
    variant["graph_data"] = json.dumps(variant["graph_data"])
    H, same = from_memtrace(variant)
    assert dict(H.nodes(data=True)) == dict(G.nodes(data=True))
    assert _edges(H) == _edges(G) == {("turn:D1:1@1", "extract:c:S1", "read"), ("extract:c:S1", "memory:m1@1", "write")}
    assert same == annotations
    assert G.graph["cases"][0]["key"] == "q0"


def test_id_without_version_is_version_one() -> None:
    doc = _doc()
    doc["graph_data"]["data"]["variables"][0]["full_node_id"] = "turn:D1:1"
    doc["graph_data"]["data"]["edges"][0]["source"] = "turn:D1:1"
    G, _ = from_memtrace(doc)
    assert G.nodes["turn:D1:1@1"]["version"] == 1
    assert G.nodes["turn:D1:1@1"]["memtrace_id"] == "turn:D1:1"


def test_derived_clock_keeps_versions_in_order() -> None:
    doc = {"graph_data": {"data": {"variables": [
        {"full_node_id": "note_7@2", "category": "memory", "value": "Ann has two cats"},
        {"full_node_id": "note_7@1", "category": "memory", "value": "Ann has a cat"},
    ], "operations": [], "edges": []}}}
    G, annotations = from_memtrace(doc)
    assert G.nodes["memory:note_7@1"]["created"] < G.nodes["memory:note_7@2"]["created"]
    assert validate(G) == [] and annotations == [] and G.graph["cases"] == []


def _set(path: list, value: object):
    def mutate(doc: dict) -> None:
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return mutate


def _append(path: list, value: object):
    def mutate(doc: dict) -> None:
        target = doc
        for key in path:
            target = target[key]
        target.append(value)
    return mutate


def _delete(path: list):
    def mutate(doc: dict) -> None:
        target = doc
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    return mutate


_D = ["graph_data", "data"]
MALFORMED = [
    (_delete(["graph_data"]), "graph_data: missing"),
    (_set(["graph_data"], "{not json"), "graph_data: a string that is not valid JSON"),
    (_set(["graph_data"], []), "graph_data: expected an object or a string, got a list"),
    (_delete([*_D, "variables"]), "graph_data.data.variables: missing"),
    (_delete([*_D, "variables", 1, "full_node_id"]), "graph_data.data.variables[1].full_node_id: missing"),
    (_set([*_D, "variables", 1], "memory:m1@1"), "graph_data.data.variables[1]: expected an object, got a string"),
    (_set([*_D, "variables", 0, "metadata"], "x"), "graph_data.data.variables[0].metadata: expected an object"),
    (_set([*_D, "variables", 1, "full_node_id"], "turn:D1:1@1"),
     "graph_data.data.variables[1].full_node_id: duplicate variable 'turn:D1:1@1'"),
    (_delete([*_D, "operations", 0, "name"]), "graph_data.data.operations[0].name: missing"),
    (_set([*_D, "operations", 0, "op_id"], "memory:m1@1"), "graph_data.data.operations[0].op_id: 'memory:m1@1' is"),
    (_set([*_D, "edges", 1, "target"], "memory:m9@1"), "graph_data.data.edges[1].target: unknown node 'memory:m9@1'"),
    (_set([*_D, "edges", 0, "type"], "write"), "graph_data.data.edges[0].type: 'write' for an edge variable -> op"),
    (_set([*_D, "edges", 0, "target"], "memory:m1@1"), "graph_data.data.edges[0]: joins two variable nodes"),
    (_set([*_D, "links"], []), "graph_data.data: has both \"edges\" and \"links\""),
    (_append([*_D, "edges"], {"source": "memory:m1@1", "target": "extract:c:S1"}),
     "graph_data.data.edges: the edges (and version order) form a cycle"),
    (_delete([*_D, "annotations", 0, "query"]), "graph_data.data.annotations[0].query: missing"),
    (_set([*_D, "annotations", 0, "golden_answers"], [{"text": "a cat"}]),
     "graph_data.data.annotations[0].golden_answers[0]: expected a string, got an object"),
    (_set([*_D, "annotations", 0, "final_error_type"], "MemoryError"),
     "graph_data.data.annotations[0].final_error_type: 'MemoryError' is not one of ExtractionError"),
    (_set([*_D, "annotations", 0, "final_op_id"], "op_9"),
     "graph_data.data.annotations[0].final_op_id: no operation 'op_9'"),
]


@pytest.mark.parametrize(("mutate", "message"), MALFORMED, ids=[m for _, m in MALFORMED])
def test_malformed_input_names_file_and_json_path(mutate, message: str, tmp_path: Path) -> None:
    doc = _doc()
    mutate(doc)
    with pytest.raises(DataError) as err:
        from_memtrace(doc, source="bench.json")
    assert str(err.value).startswith(f"bench.json: {message}")
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(DataError) as err:
        load_memtrace(path)
    assert str(err.value).startswith(f"{path}: {message}")


def test_top_level_must_be_an_object() -> None:
    with pytest.raises(DataError, match=r"^bench\.json: \(top level\): expected an object"):
        from_memtrace([_doc()], source="bench.json")


def test_load_missing_or_invalid_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no such MemTrace file"):
        load_memtrace(tmp_path / "absent.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{\"graph_data\": ", encoding="utf-8")
    with pytest.raises(DataError, match=r"bad\.json: not valid JSON \(line 1"):
        load_memtrace(bad)
