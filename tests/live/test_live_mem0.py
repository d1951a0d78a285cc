"""`memopt attach mem0` / `memopt.live`: a tap on a real Mem0, its recording, the graphs built from it.

The fast tests check the record format, the decoders and the graph builder on hand-written recordings (their
own wording, not Mem0's output). The tests marked ``mem0`` run the real mem0ai (the pinned 1.0.11 of the mem0
extra) offline against SimLM; the slow acceptance test compares attach's blame with the re-implementation's on
synthetic conversations of a seed no test or experiment tunes on (seed 5).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memopt.core.errors import ConfigError, DataError
from memopt.live.decode import Mem0V1, Mem0V2, decoder_for, parse_reply
from memopt.live.graph import build_graphs
from memopt.live.records import SCHEMA, read_records
from memopt.trace.graph import op_stages, validate, variables
from tests.conftest import ROOT

GUARD = str(ROOT / "tests" / "fixtures" / "sandbox_guard.py")
MEMOPT = str(Path(sys.executable).with_name("memopt"))
HELD_OUT = "synthetic:conversations=3,sessions=6,seed=5"


def _needs_mem0() -> None:
    if importlib.util.find_spec("mem0") is None:
        pytest.skip('needs the mem0 extra: pip install -e ".[mem0]"')


# --- format and decoders -------------------------------------------------------------------------------

def _write(path: Path, header: dict, records: list[dict]) -> Path:
    lines = [{"schema": SCHEMA, "schema_version": 1, "type": "header", **header}]
    lines += [{"seq": i + 1, **r} for i, r in enumerate(records)]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


def test_a_damaged_or_foreign_recording_is_one_clear_error(tmp_path):
    with pytest.raises(DataError, match="no such recording"):
        read_records(tmp_path / "none.jsonl")
    (tmp_path / "graph.jsonl").write_text('{"schema": "memopt.evolution_graph"}\n')
    with pytest.raises(DataError, match=r"graph.jsonl:1: not a Mem0 recording"):
        read_records(tmp_path / "graph.jsonl")
    good = _write(tmp_path / "r.jsonl", {"mem0_version": "1.0.11"}, [{"type": "llm", "call": 1}])
    good.write_text(good.read_text() + "{cut\n")
    with pytest.raises(DataError, match=r"r.jsonl:3: not valid JSON"):
        read_records(good)
    _write(tmp_path / "t.jsonl", {"mem0_version": "1.0.11"}, [{"type": "telemetry", "call": 1}])
    with pytest.raises(DataError, match=r"t.jsonl:2: unknown record type 'telemetry'"):
        read_records(tmp_path / "t.jsonl")


def test_one_decoder_per_major_and_an_unknown_major_is_refused(tmp_path):
    assert isinstance(decoder_for("1.0.11"), Mem0V1) and isinstance(decoder_for("2.2.1"), Mem0V2)
    for version in ("3.0.0", "0.1.118", "dev"):
        with pytest.raises(ConfigError, match=rf"mem0ai {version}: memopt reads mem0ai 1.x .* and 2.x"):
            decoder_for(version)
    header = _write(tmp_path / "r.jsonl", {"mem0_version": "3.1.0"}, [])
    with pytest.raises(ConfigError, match="mem0ai 3.1.0"):
        build_graphs(*read_records(header))


def test_replies_are_read_as_mem0_reads_them():
    assert parse_reply('```json\n{"facts": ["a"]}\n```') == {"facts": ["a"]}
    assert parse_reply('Sure! {"memory": []} hope that helps') == {"memory": []}
    assert parse_reply("no json here") == {} and parse_reply(None) == {}


def _session(user: str, index: int, date: str, texts: list[str]) -> list[dict]:
    return [{"type": "session", "call": None, "user_id": user, "index": index, "date_time": date,
             "dia_ids": [f"X{index}:{i}" for i in range(1, len(texts) + 1)], "speakers": []}]


def _hand_written_recording(tmp_path: Path) -> Path:
    """Two adds by hand (Bea's garden, then she gives it up) and one answered question; ids are made up."""
    s1 = ["Bea: I grow tomatoes in my allotment.", "Cy: Nice, since when?", "Bea: Since the spring of 2021."]
    s2 = ["Bea: I gave up the allotment, too much work.", "Cy: Shame."]
    old = {"id": "u-1", "text": "Bea grows tomatoes in an allotment", "score": 0.8}
    other = {"id": "u-2", "text": "Bea has had the allotment since spring 2021", "score": 0.5}
    update_prompt = "You decide memory changes."
    fixed = "Below is the current content of my memory which I have collected till now."
    records = [
        *_session("bea", 1, "3 March 2022", s1),
        {"type": "add", "call": 1, "phase": "start", "user_id": "bea", "metadata": {"session_date": "3 March 2022"},
         "messages": [{"role": "user", "content": t} for t in s1]},
        {"type": "llm", "call": 1, "messages": [{"role": "system", "content": "Pull out facts."},
                                                {"role": "user", "content": "Input:\n..."}],
         "response": json.dumps({"facts": [old["text"], other["text"]]})},
        {"type": "vs.search", "call": 1, "hits": []},
        {"type": "vs.search", "call": 1, "hits": []},
        {"type": "llm", "call": 1, "messages": [{"role": "user", "content": f"{update_prompt}\n{fixed}"}],
         "response": json.dumps({"memory": [{"id": "0", "text": old["text"], "event": "ADD"},
                                            {"id": "1", "text": other["text"], "event": "ADD"}]})},
        {"type": "history", "call": 1, "rows": [
            {"rowid": 1, "memory_id": "u-1", "old_memory": None, "new_memory": old["text"], "event": "ADD"},
            {"rowid": 2, "memory_id": "u-2", "old_memory": None, "new_memory": other["text"], "event": "ADD"}]},
        {"type": "add", "call": 1, "phase": "end", "results": []},
        *_session("bea", 2, "9 May 2022", s2),
        {"type": "add", "call": 2, "phase": "start", "user_id": "bea", "metadata": {},
         "messages": [{"role": "user", "content": t} for t in s2]},
        {"type": "llm", "call": 2, "messages": [{"role": "system", "content": "Pull out facts."},
                                                {"role": "user", "content": "Input:\n..."}],
         "response": '{"facts": ["Bea gave up the allotment"]}'},
        {"type": "vs.search", "call": 2, "hits": [other, old]},
        {"type": "llm", "call": 2, "messages": [{"role": "user", "content": f"{update_prompt}\n{fixed}"}],
         "response": json.dumps({"memory": [{"id": "0", "text": other["text"], "event": "NONE"},
                                            {"id": "1", "text": old["text"], "event": "DELETE"}]})},
        {"type": "history", "call": 2, "rows": [
            {"rowid": 3, "memory_id": "u-1", "old_memory": old["text"], "new_memory": None, "event": "DELETE"}]},
        {"type": "add", "call": 2, "phase": "end", "results": []},
        {"type": "search", "call": 3, "phase": "start", "query": "What does Bea grow?", "user_id": "bea", "limit": 5},
        {"type": "search", "call": 3, "phase": "end", "results": [{"id": "u-2", "memory": other["text"]}]},
        {"type": "case", "call": None, "user_id": "bea", "case_id": "bea:q1", "question": "What does Bea grow?",
         "answer": "Not mentioned", "search_call": 3, "gold": "tomatoes", "evidence": ["X1:1"], "category": 4},
    ]
    return _write(tmp_path / "records.jsonl", {"mem0_version": "1.0.11", "major": 1}, records)


def test_graph_keeps_none_and_delete_decisions_with_the_memory_versions_they_concern(tmp_path):
    G = build_graphs(*read_records(_hand_written_recording(tmp_path)))["bea"]
    assert validate(G) == []
    update = G.nodes["update:bea:S2"]
    by_event = {d["event"]: d for d in update["decisions"]}
    assert by_event["NONE"]["memory"] == "memory:u-2@1" and by_event["NONE"]["written"] is None
    assert by_event["DELETE"]["memory"] == "memory:u-1@1" and by_event["DELETE"]["written"] == "memory:u-1@2"
    deleted = G.nodes["memory:u-1@2"]
    assert deleted["deleted"] and deleted["action"] == "DELETE"
    assert {"memory:u-1@1", "memory:u-2@1"} <= set(G.predecessors("update:bea:S2"))
    assert ("update:bea:S2", "memory:u-1@2") in G.edges
    assert set(G.predecessors("extract:bea:S1")) >= {"turn:X1:1@1", "turn:X1:2@1", "turn:X1:3@1"}
    assert "turn:X1:1" in G.nodes["fact:bea:S1.0@1"]["derived_from"]
    assert op_stages(G, "update:bea:S2") == ("update", "deletion")
    assert [c["case_id"] for c in G.graph["cases"]] == ["bea:q1"]
    assert "memory:u-2@1" in set(G.predecessors("retrieve:bea:q1"))
    assert G.graph["sessions"] == [{"index": 1, "date_time": "3 March 2022"}, {"index": 2, "date_time": "9 May 2022"}]
    from memopt.trace.render import graph_view

    view = graph_view(G, case="q1", highlight=["update:bea:S2"])
    assert {"update:bea:S2", "answer:bea:q1@1", "memory:u-2@1"} <= {n["id"] for n in view["nodes"]}


def test_attributing_the_hand_written_graph_blames_the_delete(tmp_path):
    from memopt.attribution.case import failed_cases
    from memopt.attribution.methods import attribute
    from memopt.judge.judges import make_judge

    G = build_graphs(*read_records(_hand_written_recording(tmp_path)))["bea"]
    result = {"case_id": "bea:q1", "prediction": "Not mentioned", "f1": 0.0, "correct": False}
    (case,) = failed_cases(G, {"bea:q1": result})
    found = attribute(case, make_judge("lexical"), "memtrace")
    assert (found.error_type, found.op_id) == ("DeletionError", "update:bea:S2")


def test_attached_graphs_are_not_replayed_by_verify(tmp_path):
    from memopt.attribution.attribute_run import attribute_run
    from memopt.evaluate.run import CaseResult, RunResult
    from memopt.judge.judges import make_judge
    from memopt.trace.io import save_graph

    G = build_graphs(*read_records(_hand_written_recording(tmp_path)))["bea"]
    save_graph(G, tmp_path / "trace" / "bea.json")
    case = CaseResult("bea:q1", "bea", 4, "What does Bea grow?", "tomatoes", "Not mentioned", 0.0, 0.0, False)
    run = RunResult("mem0", "mem0ai 1.0.11", False, "hand", {}, {}, {}, [case])
    assert len(attribute_run(run, tmp_path / "trace", make_judge("lexical"))) == 1
    with pytest.raises(DataError, match="written by memopt attach.*--verify replays .*leave out --verify"):
        attribute_run(run, tmp_path / "trace", make_judge("lexical"), verify=True)
    with pytest.raises(DataError, match="written by memopt attach.*leave out --masked"):
        attribute_run(run, tmp_path / "trace", make_judge("lexical"), masked=True)


def test_the_tap_refuses_an_unknown_major_before_writing_anything(tmp_path):
    from memopt.live import trace_mem0

    with pytest.raises(ConfigError, match="mem0ai 3.0.0"), trace_mem0(object(), tmp_path / "r.jsonl", version="3.0.0"):
        pass
    assert not (tmp_path / "r.jsonl").exists()


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([MEMOPT, "attach", "mem0", *args], capture_output=True, text=True, cwd=cwd, timeout=120)


@pytest.mark.slow  # over 4 s: CLI subprocesses (CI runs it with -m slow)
def test_attach_cli_errors_exit_2_with_one_message(tmp_path):
    (tmp_path / "a.jsonl").write_text('{"case_id": "c:q1"}\n')
    (tmp_path / "p.md").write_text("Answer briefly.")
    (tmp_path / "list.yaml").write_text("- a\n- b\n")
    base = ["--trace", "trace", "--out", "results.json"]
    cases = [(["--config", "none.yaml", *base], "--config none.yaml: no such file"),
             (["--config", "list.yaml", *base], "expected a mapping (a Mem0 config), got list"),
             (["--config", "list.yaml", "--answers", "a.jsonl", "--answer-prompt", "p.md", *base],
              "--answers and --answer-prompt exclude each other"),
             (["--config", "p.md", "--answers", "a.jsonl", *base], "expected a mapping"),
             (["--config", "list.yaml", "--answers", "a.jsonl", *base], "expected a mapping")]
    for args, message in cases:
        done = _cli(*args, cwd=tmp_path)
        assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr, done.stderr
    (tmp_path / "ok.yaml").write_text("custom_update_memory_prompt: Decide.\n")
    done = _cli("--config", "ok.yaml", "--answers", "a.jsonl", *base, cwd=tmp_path)
    assert done.returncode == 2 and 'a.jsonl:1: expected {"case_id" or "question", "answer"}' in done.stderr
    assert not (tmp_path / "trace").exists() and not (tmp_path / "results.json").exists()


# --- the real Mem0 ---------------------------------------------------------------------------------------

def _offline_memory(tmp_path: Path):
    """A real mem0ai Memory on a SimLM server (seed prompts), everything under ``tmp_path``."""
    from memopt.export.formats import mem0_fragment
    from memopt.export.mem0_check import mem0_config
    from memopt.simlm.server import SimServer
    from memopt.systems.prompts import load_prompts

    os.environ.update({"MEM0_DIR": str(tmp_path / "mem0"), "MEM0_TELEMETRY": "False"})
    from mem0 import Memory

    fragment = mem0_fragment("mem0", load_prompts("mem0", ["extract", "update"], None)).config
    server = SimServer()
    url = server.start()
    return Memory.from_config(mem0_config(fragment, url, tmp_path)), server, fragment


@pytest.mark.slow
def test_library_tap_on_real_mem0_records_a_delete_and_none_decisions(tmp_path):
    _needs_mem0()
    from memopt.live import trace_mem0

    memory, server, fragment = _offline_memory(tmp_path)
    originals = (memory.add, memory.llm.generate_response, memory.vector_store.search)
    try:
        template = fragment["custom_fact_extraction_prompt"]
        sessions = [("4 June 2023", ["Dana: I play the cello in a community orchestra.",
                                     "Dana: I also keep two rabbits at home."]),
                    ("20 June 2023", ["Dana: I quit the community orchestra last week.",
                                      "Dana: I still keep two rabbits at home."])]
        with trace_mem0(memory, tmp_path / "out" / "records.jsonl", simulated=True) as tap:
            for index, (date, texts) in enumerate(sessions, 1):
                memory.config.custom_fact_extraction_prompt = template.replace("{session_date}", date)
                tap.session("dana", index=index, date_time=date, dia_ids=[f"D{index}:{i}" for i in (1, 2)])
                memory.add([{"role": "user", "content": t} for t in texts], user_id="dana",
                           metadata={"session_date": date})
            hits = memory.search("Which instrument does Dana play?", user_id="dana", limit=5)["results"]
            tap.answer("Which instrument does Dana play?", "the cello" if hits else "", user_id="dana",
                       case_id="dana:q1", gold="cello")
        assert (memory.add, memory.llm.generate_response, memory.vector_store.search) == originals
    finally:
        memory.close()
        memory.vector_store.client.close()
        server.stop()
    G = build_graphs(*read_records(tmp_path / "out" / "records.jsonl"))["dana"]
    assert validate(G) == []
    decisions = G.nodes["update:dana:S2"]["decisions"]
    deletes = [d for d in decisions if d["event"] == "DELETE"]
    nones = [d for d in decisions if d["event"] == "NONE"]
    assert deletes and nones, decisions
    cello = next(d for d in deletes if "cello" in G.nodes[d["memory"]]["value"])
    assert G.nodes[cello["written"]]["deleted"] and cello["written"].startswith(cello["memory"].split("@")[0])
    assert all(G.nodes[d["memory"]]["kind"] == "memory" for d in nones)
    history = {m: [n for n in variables(G, "memory") if n.startswith(f"memory:{m}@")] for m in [cello["memory_id"]]}
    assert len(history[cello["memory_id"]]) == 2


@pytest.mark.slow
def test_attach_on_real_mem0_agrees_with_the_reimplementation_and_stays_in_its_folder(tmp_path):
    _needs_mem0()
    sandbox = tmp_path / "sandbox"
    (sandbox / "tmp").mkdir(parents=True)
    done = subprocess.run([MEMOPT, "export", str(ROOT / "prompts"), "--pipeline", "mem0", "--format", "mem0",
                           "--out", str(sandbox / "mem0.json")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    env = {key: value for key, value in os.environ.items() if not key.lower().endswith("_proxy")}
    env.update({"MEMOPT_TEST_SANDBOX": str(sandbox), "TMPDIR": str(sandbox / "tmp"), "PYTHONDONTWRITEBYTECODE": "1",
                "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9"})
    env.pop("MEM0_TELEMETRY", None)
    env.pop("MEM0_DIR", None)
    done = subprocess.run([sys.executable, GUARD, "attach", "mem0", "--config", "mem0.json", "--data", HELD_OUT,
                           "--offline", "--trace", "trace", "--out", "results.json"], capture_output=True, text=True,
                          cwd=sandbox, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "GUARD:" not in done.stderr, done.stderr
    assert list((sandbox / "tmp").iterdir()) == [], "attach removes its temporary Mem0 store"

    reimpl = tmp_path / "reimpl"
    done = subprocess.run([MEMOPT, "run", "-p", "mem0", "--data", HELD_OUT, "--trace", str(reimpl / "trace"),
                           "--out", str(reimpl / "results.json")], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    blame = {}
    for name, root in (("attached", sandbox), ("reimpl", reimpl)):
        out = tmp_path / f"{name}.jsonl"
        done = subprocess.run([MEMOPT, "attribute", "--results", str(root / "results.json"), "--trace",
                               str(root / "trace"), "--judge-lm", "lexical", "--out", str(out),
                               *(["--memtracebench-out", str(tmp_path / "mtb")] if name == "attached" else [])],
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        blame[name] = {a["case_id"]: (a["error_type"], a["operation"]) for a in map(json.loads, out.open())}
    from memopt.trace import load_graph

    graphs = sorted((sandbox / "trace").glob("*.json"))
    assert len(graphs) == 3 and all(validate(load_graph(g)) == [] for g in graphs)
    assert len(list((tmp_path / "mtb").glob("*.json"))) == 3
    both = sorted(set(blame["attached"]) & set(blame["reimpl"]))
    agree = sum(blame["attached"][c] == blame["reimpl"][c] for c in both)
    print(f"attach vs re-implementation: {agree}/{len(both)} failed-in-both cases blamed alike")
    assert len(both) >= 30 and agree >= 0.95 * len(both)


def _mem0_major() -> int | None:
    import importlib.metadata

    try:
        return int(importlib.metadata.version("mem0ai").split(".")[0])
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return None


@pytest.mark.slow
@pytest.mark.skipif(_mem0_major() != 2, reason="runs in a venv with mem0ai 2.x (the mem0 extra pins 1.0.11)")
def test_attach_on_real_mem0_2x_builds_add_only_graphs_that_attribute(tmp_path):
    done = subprocess.run([MEMOPT, "export", str(ROOT / "prompts"), "--pipeline", "mem0", "--format", "mem0-v2",
                           "--out", "v2.json"], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    done = subprocess.run([MEMOPT, "attach", "mem0", "--config", "v2.json", "--data",
                           "synthetic:conversations=1,sessions=4,seed=5", "--offline", "--trace", "trace", "--out",
                           "results.json"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    from memopt.trace import load_graph

    G = load_graph(tmp_path / "trace" / "synth-5-000.json")
    assert validate(G) == [] and G.graph["source"]["system"].startswith("mem0ai 2.")
    assert {G.nodes[n]["operation"] for n in G if G.nodes[n].get("type") == "op"} == {"extract", "retrieve", "answer"}
    units = [G.nodes[n] for n in variables(G, "memory")]
    assert units and {u["action"] for u in units} == {"ADD"}
    assert all(any(p.startswith("extract:") for p in G.predecessors(n)) for n in variables(G, "memory"))
    done = subprocess.run([MEMOPT, "attribute", "--results", "results.json", "--trace", "trace", "--judge-lm",
                           "lexical", "--out", "attr.jsonl"], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr
    assert {json.loads(line)["operation"] for line in (tmp_path / "attr.jsonl").open()} <= {"extract", "retrieve",
                                                                                              "answer"}


def test_confirm_is_checked_before_any_lm_call(tmp_path):
    from memopt.optimize.experiment import load_experiment
    from memopt.optimize.loop import check_experiment

    experiment = ROOT / "experiments" / "mem0_confirm.yaml"
    with pytest.raises(ConfigError, match="confirm.system mem0 confirms the mem0 pipeline's prompts, not 'rag'"):
        check_experiment(load_experiment(experiment, {"pipeline": "rag"}))
    with pytest.raises(ConfigError, match="confirm.config must name your Mem0 config"):
        check_experiment(load_experiment(experiment, {"confirm.offline": False}))
    with pytest.raises(ConfigError, match="confirm.system"):
        load_experiment(experiment, {"confirm.system": "zep"})


@pytest.mark.slow
def test_optimize_confirms_in_real_mem0_and_the_export_reproduces_it(tmp_path):
    _needs_mem0()
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    done = subprocess.run([MEMOPT, "optimize", str(ROOT / "experiments" / "mem0_confirm.yaml"), "--tracking-uri", uri,
                           "--out", "summary.json"], capture_output=True, text=True, cwd=tmp_path, timeout=900)
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    confirm = summary["confirm"]
    assert confirm["simulated"] and set(confirm["seed"]) == set(confirm["best"]) == {"val", "test"}
    assert confirm["best"]["val"]["f1"] > confirm["seed"]["val"]["f1"], confirm
    from mlflow import MlflowClient

    logged = MlflowClient(uri).get_run(summary["run_id"]).data.metrics
    assert logged["confirm.best.val_f1"] == confirm["best"]["val"]["f1"]
    assert logged["confirm.seed.test_f1"] == confirm["seed"]["test"]["f1"]
    for fmt, out in (("mem0", "tuned.json"), ("text", "tuned")):
        done = subprocess.run([MEMOPT, "export", summary["run_id"], "--format", fmt, "--out", out, "--tracking-uri",
                               uri], capture_output=True, text=True, cwd=tmp_path, timeout=120)
        assert done.returncode == 0, done.stderr
    from memopt.optimize.experiment import load_experiment
    from memopt.optimize.loop import splits_of

    experiment = load_experiment(ROOT / "experiments" / "mem0_confirm.yaml")
    val = ",".join(c.sample_id for c in splits_of(experiment)[2])
    done = subprocess.run([MEMOPT, "attach", "mem0", "--config", "tuned.json", "--offline", "--data",
                           experiment.data.source, "--conversations", val, "--answer-prompt", "tuned/mem0/answer.md",
                           "--trace", "trace", "--out", "val.json"], capture_output=True, text=True, cwd=tmp_path,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "val.json").read_text())["metrics"]["f1"] == confirm["best"]["val"]["f1"]
