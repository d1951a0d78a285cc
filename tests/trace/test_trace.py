"""Evolution graphs: every pipeline's traced run gives a valid graph; provenance; round trips; replay."""

from __future__ import annotations

import json

import dspy
import networkx as nx
import pytest

from memopt.data.synth import SynthSpec, synthetic_conversations
from memopt.lm.build import make_lm
from memopt.systems import make_system
from memopt.trace import (
    derived_from_turn,
    downstream_ops,
    export_graphml,
    graph_to_json,
    lineage,
    load_graph,
    memory_as_of,
    op_subgraph,
    ops,
    replay,
    save_graph,
    trace,
    validate,
    variables,
)
from memopt.trace.graph import answer_of
from tests.conftest import SHIPPED


@pytest.fixture(scope="module")
def conversation():
    return synthetic_conversations(SynthSpec(conversations=1, sessions=6, seed=2))[0]


def _traced(name: str, conversation, system=None):
    system = system or make_system(name)
    with dspy.context(lm=make_lm("sim")), trace(system) as tracer:
        system.ingest(conversation)
        answers = {c.case_id.split(":")[-1]: system.answer_case(c).answer for c in conversation.cases}
        tracer.record_cases(conversation.cases)
    return tracer.graph, answers


@pytest.fixture(scope="module")
def graphs(conversation):
    return {name: _traced(name, conversation) for name in SHIPPED}


@pytest.mark.parametrize("name", SHIPPED)
def test_traced_run_is_a_valid_graph(graphs, name):
    G, answers = graphs[name]
    assert validate(G) == []
    assert nx.is_directed_acyclic_graph(G)
    assert all({G.nodes[u]["type"], G.nodes[v]["type"]} == {"variable", "op"} for u, v in G.edges)
    assert len(variables(G, "answer")) == len(answers)
    turns = set(variables(G, "turn"))
    for key in answers:
        node = answer_of(G, key)
        assert G.nodes[node]["value"] == answers[key]
        assert set(lineage(G, node)) & turns  # every answer reaches back to turns
    assert G.graph["pipeline"] == name and G.graph["simulated"] is True and G.graph["cases"]
    llm_ops = [n for n in ops(G) if G.nodes[n]["op_kind"] == "llm"]
    assert llm_ops and all(G.nodes[n]["lm_calls"] == 1 and G.nodes[n]["input_tokens"] > 0 for n in llm_ops)
    assert all(any(G.nodes[p]["kind"] == "prompt" for p in G.predecessors(n)) for n in llm_ops)


def test_tracing_does_not_change_results(graphs, conversation):
    for name in SHIPPED:
        system = make_system(name)
        with dspy.context(lm=make_lm("sim")):
            system.ingest(conversation)
            plain = {c.case_id.split(":")[-1]: system.answer_case(c).answer for c in conversation.cases}
        assert plain == graphs[name][1], name


def test_mem0_provenance_and_queries(graphs):
    G, _ = graphs["mem0"]
    memories = variables(G, "memory")
    assert memories
    for node in memories:
        d = G.nodes[node]
        writer = next(G.predecessors(node))
        assert G.nodes[writer]["operation"] == "update"
        assert set(lineage(G, node)) & set(variables(G, "turn")), node  # links to the turns it came from
        if d["version"] > 1:  # links to the previous version, read by the op that wrote this one
            assert f"{d['name']}@{d['version'] - 1}" in lineage(G, node)
    for fact in variables(G, "fact"):
        extract = next(G.predecessors(fact))
        assert G.nodes[extract]["operation"] == "extract"
        assert any(G.nodes[t]["kind"] == "turn" for t in G.predecessors(extract))
    for context in variables(G, "context"):
        retrieve = next(G.predecessors(context))
        held = [v for v in G.predecessors(retrieve) if G.nodes[v]["kind"] == "memory"]
        assert set(held) == {f"{r}" for r in G.nodes[context]["derived_from"]}
    first_turn = variables(G, "turn")[0]
    dia_id = G.nodes[first_turn]["name"].removeprefix("turn:")
    assert derived_from_turn(G, dia_id) == nx.descendants(G, first_turn)
    last_update = ops(G, "update")[-1]
    live = memory_as_of(G, last_update)
    assert live and all(G.nodes[n]["created"] < G.nodes[last_update]["start"] for n in live)
    assert not any(G.nodes[n]["deleted"] for n in live)
    sub = op_subgraph(G, last_update)
    assert last_update in sub and all(sub.has_edge(v, last_update) or sub.has_edge(last_update, v)
                                      for v in sub if v != last_update)


def test_json_round_trip_is_equal(graphs, tmp_path):
    for name, (G, _) in graphs.items():
        path = save_graph(G, tmp_path / f"{name}.json")
        H = load_graph(path)
        assert nx.utils.graphs_equal(G, H)
        assert graph_to_json(H) == graph_to_json(G)
        assert json.loads(path.read_text())["schema_version"] == 2


def test_graphml_export_reads_back(graphs, tmp_path):
    G, _ = graphs["rag"]
    H = nx.read_graphml(export_graphml(G, tmp_path / "rag.graphml"))
    assert set(H.nodes) == set(G.nodes) and set(H.edges) == set(G.edges)


@pytest.mark.parametrize("name", SHIPPED)
def test_replay_without_overrides_is_exact_and_calls_no_lm(graphs, name):
    G, answers = graphs[name]
    result = replay(G)
    assert result.answers == answers
    assert result.lm_calls == 0 and result.reran == []
    assert {n: G.nodes[n]["output"] for n in ops(G)} == {n: result.graph.nodes[n]["output"] for n in ops(G)}


def test_replay_with_an_override_reruns_only_downstream_ops(graphs):
    G, answers = graphs["mem0"]
    extracts = ops(G, "extract")
    target = extracts[len(extracts) // 2]
    facts = G.nodes[target]["output"]["facts"]
    result = replay(G, {target: {"facts": facts + ["Zed adopted an iguana named Quill"]}})
    upstream = {n for n in ops(G) if G.nodes[n]["start"] < G.nodes[target]["start"]}
    assert result.reran and result.lm_calls == len(result.reran)
    assert not set(result.reran) & upstream
    assert set(result.reran) <= set(downstream_ops(result.graph, target))
    assert any(G.nodes[n]["operation"] == "update" for n in result.reran)
    assert result.overridden == [target] and result.graph.nodes[target]["overridden"] is True
    iguana = [n for n in variables(result.graph, "memory") if "iguana" in str(result.graph.nodes[n]["value"])]
    assert iguana  # the injected fact reached the store
    assert validate(result.graph) == []


def test_replay_of_a_saved_graph_and_bad_overrides(graphs, tmp_path):
    G, answers = graphs["evermemos"]
    loaded = load_graph(save_graph(G, tmp_path / "g.json"))
    one = next(iter(answers))
    assert replay(loaded, cases=[one]).answers == {one: answers[one]}
    from memopt.core.errors import ConfigError

    with pytest.raises(ConfigError, match="no operation nope"):
        replay(loaded, {"nope": {}})
    with pytest.raises(ConfigError, match="no question q999"):
        replay(loaded, cases=["q999"])


def test_run_with_trace_writes_one_graph_per_conversation(tmp_path):
    from memopt.evaluate.pipeline import run_pipeline

    result = run_pipeline("rag", "synthetic:conversations=2,sessions=3,seed=4", trace_dir=tmp_path, judge_lm=None)
    files = sorted(p.name for p in tmp_path.glob("*.json"))
    assert files == sorted(f"{sid}.json" for sid in {c.sample_id for c in result.cases})
    G = load_graph(tmp_path / files[0])
    assert validate(G) == [] and len(G.graph["cases"]) == sum(c.sample_id == G.graph["conversation"]
                                                                for c in result.cases)


def test_gzip_graph_files_round_trip(graphs, tmp_path):
    G, _ = graphs["mem0"]
    plain, packed = save_graph(G, tmp_path / "g.json"), save_graph(G, tmp_path / "g.json.gz")
    assert packed.stat().st_size < plain.stat().st_size / 3
    assert nx.utils.graphs_equal(load_graph(packed), G)
