"""Attribution on traces memopt did not make: smartcomment graphs with or without annotations, cases files, judge ops,
retrieved evidence, a system prior; and the mechanism's rules on the shapes issue 44 lists.

The graphs are `tests/fixtures/graphs44` (written by an author who never read memopt's code; README there). These
tests use its ``tune/`` half only, the half the rules were developed on, so they are regression tests, not the
held-out measurement (docs/datasets.md reports that, measured once).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from memopt.attribution.case import FailedCase
from memopt.attribution.evidence import seed_evidence
from memopt.attribution.memtrace import memtrace
from memopt.core.errors import ConfigError, DataError
from memopt.judge.judges import LexicalJudge
from tests.conftest import ROOT

pytest.importorskip("smartcomment")

from memopt.bench.attribution import score_memtracebench  # noqa: E402
from memopt.bench.diagnose import score_cases  # noqa: E402
from memopt.trace.memtracebench import load_memtrace  # noqa: E402

GRAPHS = ROOT / "tests" / "fixtures" / "graphs44"
TUNE, STRIPPED = GRAPHS / "tune", GRAPHS / "stripped" / "tune"


def _case(name: str, question: str, *, retrieved: bool = False) -> tuple[FailedCase, str, str]:
    """A labelled failed case of a tune graph: (case, label's error type, label's op id)."""
    G, annotations = load_memtrace(TUNE / name)
    a = next(a for a in annotations if a.query.startswith(question))
    turns = {d["sc_id"]: d["name"].removeprefix("turn:") for _, d in G.nodes(data=True) if d.get("kind") == "turn"}
    given = () if retrieved else tuple(turns[e] for e in a.source_evidence_ids)
    evidence, pseudo = seed_evidence(G, a.query, a.golden_answers[0], given)
    date = next(c.get("date") for c in G.graph["cases"] if c["key"] == a.case_key)
    case = FailedCase(G, f"{G.graph['conversation']}:{a.case_key}", a.query, a.golden_answers[0], evidence,
                      a.prediction or "", 0, pseudo, date)
    return case, a.final_error_type, a.final_op_id


def _blame(case: FailedCase) -> tuple[str, str]:
    found = memtrace(case, LexicalJudge())
    return found.error_type, case.G.nodes[found.op_id]["sc_op_id"]


@pytest.mark.parametrize(("name", "question", "why"), [
    ("profile_layer_leo.json", "What are the names of Leo's pets?", "an op named extract overwrote a slot"),
    ("per_message_add_croatia.json", "What date is Hannah flying out", "an add op overwrote a unit"),
    ("summary_buffer_leith.json", "What instrument did Tomasz", "an op of category update never let it in"),
    ("debug_copy_podcast.json", "What is the name of Sofia's podcast?", "a debug dump no op reads"),
    ("debug_copy_podcast.json", "Which library branch", "a transcript cache no op reads"),
    ("yearless_dates_ravi.json", "When did Ravi hike Snowdon?", "'12 May' written in 2023 holds '12 May 2023'"),
    ("computed_garden_counts.json", "How many farmers markets", "a count: the op that lost one item"),
    ("computed_garden_counts.json", "How many plants did I repot?", "a count whose items are all in the context"),
    ("computed_garden_counts.json", "How many weeks ago", "N weeks ago: the dated fact is in the context"),
    ("persona_kv_nour.json", "On which attempt", "an ordinal: every attempt is in the context"),
    ("consolidation_kenji.json", "Which city did Kenji's brother", "the names do not outvote the one-word gold"),
    ("multi_evidence_weddings.json", "Which cities did Chloe", "a line about Sam does not hold Chloe's Krakow"),
    ("one_word_maria.json", "What did Maria adopt?", "'cat' is not 'catering'"),
])
def test_the_type_follows_what_the_op_did_on_shapes_of_another_author(name, question, why):
    case, error_type, op_id = _case(name, question)
    assert _blame(case) == (error_type, op_id), why


@pytest.mark.parametrize(("name", "question"), [
    ("profile_layer_leo.json", "What are the names of Leo's pets?"),
    ("rerank_topn_trail.json", "What was Ines's time"),
    ("computed_garden_counts.json", "How many plants did I repot?"),
    ("summary_buffer_leith.json", "How many half marathons"),
])
def test_retrieved_evidence_reaches_the_blame_gold_evidence_does(name, question):
    case, error_type, op_id = _case(name, question, retrieved=True)
    assert case.pseudo_evidence and _blame(case) == (error_type, op_id)


def test_memtrace_beats_every_baseline_with_gold_and_with_retrieved_evidence():
    report = score_memtracebench(TUNE, evidence=("gold", "retrieved"))
    rows = {(r["method"], r["evidence"]): r for r in report["results"]}
    for evidence in ("gold", "retrieved"):
        ours = rows[("memtrace", evidence)]
        assert ours["n"] == 31 and ours["op_accuracy"] >= 0.85 and ours["type_accuracy"] >= 0.85
        for (method, source), row in rows.items():
            if source == evidence and method != "memtrace":
                assert ours["op_accuracy"] > row["op_accuracy"] and ours["type_accuracy"] > row["type_accuracy"]


def test_from_stripped_graphs_and_a_cases_file_alone_within_a_tenth():
    annotated = {r["method"]: r for r in score_memtracebench(TUNE)["results"]}["memtrace"]
    stripped = {r["method"]: r for r in score_cases(TUNE, STRIPPED, TUNE / "cases.jsonl", ["memtrace"])}["memtrace"]
    assert stripped["n"] == annotated["n"] == 31
    assert stripped["op_accuracy"] >= annotated["op_accuracy"] - 0.10
    assert stripped["type_accuracy"] >= annotated["type_accuracy"] - 0.10


def test_attribute_on_unannotated_graphs_writes_the_graphs_own_op_ids(tmp_path):
    out = tmp_path / "a.jsonl"
    done = subprocess.run([sys.executable, "-m", "memopt", "attribute", str(STRIPPED), "--judge-lm", "lexical",
                           "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    found = [json.loads(line) for line in out.read_text().splitlines()]
    own = {}
    for path in STRIPPED.glob("*.json"):
        for op in json.loads(path.read_text())["data"]["operations"]:
            own[op["op_id"]] = op["op_name"]
    judged_wrong = sum(1 for _ in (TUNE / "cases.jsonl").open())
    assert len(found) == judged_wrong  # the failures come from the graphs' own judge ops
    assert all(a["op_id"].startswith("op-") and own[a["op_id"]] == a["op_name"] for a in found)
    assert all(a["question"] and a["evidence"] == "retrieved" and a["node_id"] for a in found)


def test_a_bad_cases_file_is_one_error_naming_the_line(tmp_path):
    from memopt.attribution.attribute_run import attribute_trace

    judge = LexicalJudge()
    for text, message in (('{"question": "What did Maria adopt?"}\n', r"cases.jsonl:1: 'expected' is missing"),
                          ("not json\n", r"cases.jsonl:1: not valid JSON"),
                          ('{"question": "Who won the cup?", "expected": "Leeds"}\n',
                           r"cases.jsonl:1: no graph asks 'Who won the cup\?'"),
                          ('{"question": "What did Maria adopt?", "expected": "cat", "graph": "x.json"}\n',
                           r"cases.jsonl:1: graph 'x.json' is not in the trace directory")):
        (tmp_path / "cases.jsonl").write_text(text)
        with pytest.raises(DataError, match=message):
            attribute_trace(STRIPPED, judge, cases_file=tmp_path / "cases.jsonl")


def test_a_system_prior_names_the_stage_of_a_foreign_op(tmp_path):
    from memopt.attribution.attribute_run import attribute_trace
    from memopt.attribution.prior import load_prior

    (tmp_path / "cases.jsonl").write_text(json.dumps({"question": "What instrument did Tomasz start learning?",
                                                      "expected": "cello", "graph": "summary_buffer_leith"}) + "\n")
    trace = tmp_path / "trace"
    trace.mkdir()
    (trace / "summary_buffer_leith.json").write_text((STRIPPED / "summary_buffer_leith.json").read_text())
    (found,) = attribute_trace(trace, LexicalJudge(), cases_file=tmp_path / "cases.jsonl")
    assert (found.error_type, found.op_name) == ("ExtractionError", "summarizer.rewrite_running_summary")
    (tmp_path / "prior.yaml").write_text("overview: a running summary rewritten after each session\n"
                                         "stages:\n  'summarizer.rewrite_*': update\n")
    (again,) = attribute_trace(trace, LexicalJudge(), cases_file=tmp_path / "cases.jsonl",
                               prior=load_prior(tmp_path / "prior.yaml"))
    assert (again.error_type, again.op_id) == ("UpdateError", found.op_id)
    (tmp_path / "bad.yaml").write_text("stages:\n  'summarizer.*': summarising\n")
    with pytest.raises(ConfigError, match=r"bad.yaml: stages.summarizer.\*: 'summarising' is not a stage"):
        load_prior(tmp_path / "bad.yaml")


def test_evidence_retrieval_finds_most_gold_evidence_in_its_top_eight():
    from memopt.bench.evidence import bench_evidence

    rows = {r["ranking"]: r for r in bench_evidence(TUNE, ks=(2, 8))["rows"]}
    assert rows["fused"]["recall@8"] >= 0.9 and rows["fused"]["recall@2"] >= 0.8
    assert rows["fused"]["recall@2"] >= rows["fused, question only"]["recall@2"]


@pytest.mark.slow  # over 4 s on a quiet machine (CI runs it with -m slow)
def test_the_embedding_role_goes_through_litellm_over_http():
    from memopt.attribution.evidence import retrieve_turns
    from memopt.lm.embedding import LiteLLMEmbedder, make_embedder
    from memopt.simlm.server import SimServer

    G, _ = load_memtrace(TUNE / "one_word_maria.json")
    server = SimServer()
    url = server.start()
    try:
        embedder = make_embedder(f"sim-embed@{url}")
        assert isinstance(embedder, LiteLLMEmbedder)
        vectors = embedder.embed(["Maria adopted a cat", "John collects stamps"])
        ranked = retrieve_turns(G, "What does John collect?", "stamps", k=2, embedder=embedder)
    finally:
        server.stop()
    assert len(vectors) == 2 and len(vectors[0]) > 8 and server.stats.embeddings >= 2
    assert G.nodes[ranked[0]]["name"].endswith("D1:4")
    with pytest.raises(ConfigError, match="not an embedding model"):
        make_embedder("local")


def test_a_question_date_only_the_annotation_carries_is_read(tmp_path):
    doc = json.loads((TUNE / "computed_garden_counts.json").read_text())
    for node in doc["data"]["nodes"]:
        node["metadata"].pop("question_date", None)
    for session in doc["data"]["sessions"]:
        (session.get("metadata") or {}).pop("question_date", None)
    (tmp_path / "g.json").write_text(json.dumps(doc))
    G, annotations = load_memtrace(tmp_path / "g.json")
    assert all("date" not in c for c in G.graph["cases"])
    assert {a.question_date for a in annotations} == {"2023-06-20"}


def test_the_earliest_decisive_loss_is_blamed(tmp_path):
    """Two memories held the fact: an update degraded one in session 2, a delete removed the other in session 3.
    Correcting either alone keeps the fact; the earliest (session 2) is blamed, as the docs say."""
    from memopt.attribution.case import failed_cases
    from memopt.live.graph import build_graphs
    from memopt.live.records import SCHEMA, read_records

    one, two = {"id": "u-1", "text": "Bea grows tomatoes in her allotment"}, {"id": "u-2", "text": "Bea grows tomatoes"}

    def add(call: int, texts: list[str], history: list[dict], decisions: list[dict], seen: list[dict]) -> list[dict]:
        fixed = "Below is the current content of my memory which I have collected till now."
        return [{"type": "session", "call": None, "user_id": "bea", "index": call, "date_time": f"{call} May 2023",
                 "dia_ids": [f"D{call}:{i}" for i in range(1, len(texts) + 1)], "speakers": []},
                {"type": "add", "call": call, "phase": "start", "user_id": "bea", "metadata": {},
                 "messages": [{"role": "user", "content": t} for t in texts]},
                {"type": "llm", "call": call, "messages": [{"role": "system", "content": "Pull out facts."},
                                                           {"role": "user", "content": "Input:"}],
                 "response": json.dumps({"facts": texts})},
                {"type": "vs.search", "call": call, "hits": seen},
                {"type": "llm", "call": call, "messages": [{"role": "user", "content": f"Decide.\n{fixed}"}],
                 "response": json.dumps({"memory": decisions})},
                {"type": "history", "call": call, "rows": history},
                {"type": "add", "call": call, "phase": "end", "results": []}]

    records = [
        *add(1, ["Bea: I grow tomatoes in my allotment.", "Bea: I grow tomatoes."],
             [{"rowid": 1, "memory_id": "u-1", "old_memory": None, "new_memory": one["text"], "event": "ADD"},
              {"rowid": 2, "memory_id": "u-2", "old_memory": None, "new_memory": two["text"], "event": "ADD"}],
             [{"id": "0", "text": one["text"], "event": "ADD"}, {"id": "1", "text": two["text"], "event": "ADD"}], []),
        *add(2, ["Bea: The allotment flooded."],
             [{"rowid": 3, "memory_id": "u-1", "old_memory": one["text"], "new_memory": "Bea's allotment flooded",
               "event": "UPDATE"}],
             [{"id": "0", "text": "Bea's allotment flooded", "event": "UPDATE"}], [one]),
        *add(3, ["Bea: I gave up gardening for a while."],
             [{"rowid": 4, "memory_id": "u-2", "old_memory": two["text"], "new_memory": None, "event": "DELETE"}],
             [{"id": "0", "text": two["text"], "event": "DELETE"}], [two]),
        {"type": "search", "call": 4, "phase": "start", "query": "What does Bea grow?", "user_id": "bea", "limit": 5},
        {"type": "search", "call": 4, "phase": "end", "results": []},
        {"type": "case", "call": None, "user_id": "bea", "case_id": "bea:q1", "question": "What does Bea grow?",
         "answer": "Nothing", "search_call": 4},
    ]
    path = tmp_path / "records.jsonl"
    header = {"schema": SCHEMA, "schema_version": 1, "type": "header", "mem0_version": "1.0.11", "major": 1}
    path.write_text("\n".join(json.dumps(r) for r in [header, *({"seq": i, **r} for i, r in enumerate(records, 1))]))
    G = build_graphs(*read_records(path))["bea"]
    (case,) = failed_cases(G, {"bea:q1": {"case_id": "bea:q1", "prediction": "Nothing", "correct": False}})
    case = FailedCase(G, case.case_id, case.question, "tomatoes", ("D1:1", "D1:2"), case.prediction)
    found = memtrace(case, LexicalJudge())
    assert (found.error_type, found.op_id) == ("UpdateError", "update:bea:S2")


def test_on_the_held_out_half_memtrace_stays_above_every_baseline_without_annotations():
    """The held-out half (measured once, after the code was final: 0.833 / 0.833, docs/datasets.md) is not tuned on;
    this keeps what that measurement showed: above every baseline, and nothing lost without annotations."""
    held_out = GRAPHS / "heldout"
    rows = {(r["method"], r["evidence"]): r for r in score_memtracebench(held_out, evidence=("gold",))["results"]}
    stripped = {r["method"]: r for r in score_cases(held_out, GRAPHS / "stripped" / "heldout",
                                                     held_out / "cases.jsonl", ["memtrace"])}["memtrace"]
    ours = rows[("memtrace", "gold")]
    assert ours["n"] == 30 and min(ours["op_accuracy"], ours["type_accuracy"]) >= 0.83
    assert all(ours["op_accuracy"] > r["op_accuracy"] for (m, _), r in rows.items() if m != "memtrace")
    assert stripped["op_accuracy"] >= ours["op_accuracy"] - 0.10
