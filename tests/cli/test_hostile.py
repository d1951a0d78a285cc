"""Hostile input: every command on a corpus of bad inputs exits 2 with one line naming the file / key.

Each case runs the real console entry point (`memopt.cli.main`) in-process, from an empty working
directory, and asserts: exit code 2, exactly one line on stderr (``error: ...``) that names the
file, option or key, no traceback, and no file created or changed anywhere under the test's base
directory (so nothing is written outside the output paths, and no half-written output is left).
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from memopt.data.locomo import to_locomo
from memopt.data.synth import SynthSpec, synthetic_conversations
from tests.conftest import run_main as _run
from tests.conftest import snapshot

BIG = "9" * 5000  # beyond Python's int-string conversion limit (4300 digits)
DEEP = "[" * 100_000 + "]" * 100_000
DATA = "synthetic:conversations=2,sessions=2,seed=1,questions_per_conversation=6"
OPT_DATA = "synthetic:conversations=4,sessions=2,seed=1,questions_per_conversation=6"  # train, val and test


def _locomo() -> list[dict]:
    return [to_locomo(c) for c in synthetic_conversations(SynthSpec(conversations=2, sessions=2, seed=1,
                                                                     questions_per_conversation=6))]


def _hash_collision() -> tuple[str, str]:
    """Two sample ids whose safe file names are the same (same slug, same 8 hex digits of SHA-256)."""
    import hashlib
    import itertools

    seen: dict[str, str] = {}
    for chars in itertools.product("!#$%&()*+,;=@[]^{}~", repeat=6):
        text = "conv " + "".join(chars) + " 1"
        digest = hashlib.sha256(text.encode()).hexdigest()[:8]
        if digest in seen:
            return seen[digest], text
        seen[digest] = text
    raise AssertionError("no collision found")


def _write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """Bad (and a few good) input files, and a traced run to attribute."""
    from memopt.core.files import write_json
    from memopt.evaluate.pipeline import run_pipeline

    root = tmp_path_factory.mktemp("hostile")
    samples = _locomo()
    a, b = _hash_collision()
    write_json(root / "good.json", samples)
    _write(root / "notjson.json", "{not json")
    _write(root / "binary.json", bytes(range(256)) * 8)
    _write(root / "bigint.json", json.dumps(samples).replace('"category": 2', f'"category": {BIG}', 1))
    _write(root / "deep.json", DEEP)
    _write(root / "empty.json", "[]")
    _write(root / "badtype.json", json.dumps([{**samples[0], "sample_id": ["x"]}]))
    _write(root / "dup.json", json.dumps([samples[0], samples[0]]))
    _write(root / "badcat.json", json.dumps(samples).replace('"category": 2', '"category": 7', 1))
    _write(root / "noturns.json", json.dumps([{**samples[0], "conversation": {"speaker_a": "A", "speaker_b": "B"}}]))
    _write(root / "surrogate.json", json.dumps(samples).replace('"question": "', '"question": "\\ud800', 1))
    _write(root / "emptyid.json", json.dumps([{**samples[0], "sample_id": ""}]))
    _write(root / "emptyq.json", json.dumps([{**samples[0], "qa": [{**samples[0]["qa"][0], "question": "  "}]}]))
    _write(root / "newlineid.json", json.dumps([{**samples[0], "sample_id": "conv\n1"}]))
    _write(root / "hashcollision.json", json.dumps([{**samples[0], "sample_id": a}, {**samples[1], "sample_id": b}]))
    _write(root / "noqa.json", json.dumps([{k: v for k, v in sample.items() if k != "qa"} for sample in samples]))
    conv, qa = samples[0]["conversation"], samples[0]["qa"]
    first, second = conv["session_1"][0]["dia_id"], conv["session_2"][0]["dia_id"]
    for name, edit in (("dupdia", lambda c: c["session_2"][0].update(dia_id=first)),
                       ("emptydia", lambda c: c["session_1"][0].update(dia_id="")),
                       ("atdia", lambda c: c["session_2"][0].update(dia_id=f"{first}@2")),
                       ("session01", lambda c: c.update(session_01=[{**c["session_2"][0], "dia_id": "D9:1"}],
                                                        session_01_date_time=c["session_1_date_time"]))):
        edited = json.loads(json.dumps(conv))
        edit(edited)
        _write(root / f"{name}.json", json.dumps([{**samples[0], "conversation": edited}]))
    assert second != first
    _write(root / "boolcat.json", json.dumps([{**samples[0], "qa": [{**qa[0], "category": True}]}]))
    _write(root / "listanswer.json", json.dumps([{**samples[0], "qa": [{**qa[0], "category": 4, "answer": ["x"]}]}]))
    run = {"variant": "outcome", "seed": 0, "test_f1_before": 0.4, "test_f1_after": 0.5, "gain": 0.1, "lm_calls": 90,
           "seconds": 0.2}
    report = {"experiment": "quickstart", "budget": 300, "rounds": 1, "oracle": {"test_f1": 0.8}, "runs": [run]}
    _write(root / "bench1.json", json.dumps(report))
    _write(root / "bench2.json", json.dumps({**report, "runs": [{**run, "seed": 1, "test_f1_after": [0.5]}]}))
    _write(root / "a_file", "not a directory")
    (root / "a_dir").mkdir()
    # experiments
    _write(root / "exp" / "binary.yaml", b"pipeline: mem0\n\xff\xfe\x00\x81 rounds: 2\n")
    _write(root / "exp" / "list.yaml", "- pipeline\n- mem0\n")
    _write(root / "exp" / "typo.yaml", "pipeline: mem0\nroundz: 2\n")
    _write(root / "exp" / "twice.yaml", "pipeline: mem0\nrounds: 2\nseed: 1\nrounds: 5\n")
    _write(root / "exp" / "longname.yaml", f"pipeline: mem0\nmlflow: {{experiment: {'x' * 501}}}\n")
    _write(root / "exp" / "blankname.yaml", "pipeline: mem0\nmlflow: {experiment: \"run\\n2\"}\n")
    _write(root / "exp" / "bigint.yaml", f"pipeline: mem0\nseed: {BIG}\n")
    _write(root / "exp" / "deep.yaml", "pipeline: mem0\nknobs: " + "[" * 3_000 + "]" * 3_000 + "\n")
    _write(root / "exp" / "ok.yaml", f"pipeline: mem0\ndata: {{source: '{OPT_DATA}'}}\nrounds: 1\n")
    _write(root / "exp" / "scalarbudget.yaml", f"pipeline: mem0\ndata: {{source: '{OPT_DATA}'}}\nbudget: 5\n")
    _write(root / "exp" / "negknob.yaml", f"pipeline: mem0\ndata: {{source: '{OPT_DATA}'}}\nknobs: {{top_k: -1}}\n")
    _write(root / "exp" / "zerosearch.yaml",
           f"pipeline: rag\ndata: {{source: '{OPT_DATA}'}}\noptimizer: {{search: {{top_k: [0, 5]}}}}\n")
    _write(root / "exp" / "badlm.yaml",
           f"pipeline: mem0\ndata: {{source: '{OPT_DATA}'}}\nlm: {{judge: 'not a spec'}}\n")
    _write(root / "exp" / "noprompts.yaml", f"pipeline: mem0\ndata: {{source: '{OPT_DATA}'}}\nprompts: nowhere\n")
    _write(root / "exp" / "nansplit.yaml", f"pipeline: mem0\ndata: {{source: '{OPT_DATA}', split: [.nan, 0.5, 0.5]}}\n")
    _write(root / "exp" / "onesplit.yaml",
           "pipeline: mem0\ndata: {source: 'synthetic:conversations=1,sessions=2'}\n")
    # prompts
    _write(root / "prompts_binary" / "rag" / "answer.md", b"\xff\xfe\x81")
    _write(root / "prompts_binary" / "rag" / "rewrite_query.md", "Rewrite the question.")
    _write(root / "prompts_huge" / "rag" / "answer.md", "Answer. " * 12_500 + "!")  # 100,001 bytes: read at once
    _write(root / "prompts_huge" / "rag" / "rewrite_query.md", "Rewrite the question.")
    (root / "prompts_empty").mkdir()
    _write(root / "prompts_nul" / "rag" / "answer.md", "Answer the question.\x00")
    _write(root / "prompts_nul" / "rag" / "rewrite_query.md", "Rewrite the question.")
    _write(root / "prompts_typo" / "rag" / "answer.md", "Answer the question.")
    _write(root / "prompts_typo" / "rag" / "rewrite_query.md", "Rewrite the question.")
    _write(root / "prompts_typo" / "rag" / "anwser.md", "Answer briefly.")  # the edit meant for answer.md
    for name, knobs in (("fraction", "knobs: {top_k: 2.7}\n"), ("infinite", "knobs: {top_k: .inf}\n"),
                        ("scores", "knobs: {top_k: 3}\nscores: 5\n")):  # hand-edited knobs.yaml beside exported prompts
        _write(root / f"prompts_knobs_{name}" / "rag" / "answer.md", "Answer the question.")
        _write(root / f"prompts_knobs_{name}" / "rag" / "rewrite_query.md", "Rewrite the question.")
        _write(root / f"prompts_knobs_{name}" / "rag" / "knobs.yaml", knobs)
    # a traced run, its graph, and bad graphs
    run_pipeline("rag", DATA, judge_lm="sim", trace_dir=root / "trace").save(root / "results.json")
    other = run_pipeline("rag", "synthetic:conversations=2,sessions=2,seed=9,questions_per_conversation=6",
                         judge_lm="sim", limit=3)
    other.save(root / "other_results.json")
    _write(root / "future_results.json", json.dumps({**json.loads((root / "results.json").read_text()),
                                                     "schema_version": 99}))
    graph = sorted((root / "trace").glob("*.json"))[0]
    doc = json.loads(graph.read_text())
    _write(root / "graphs" / "notjson.json", "{")
    _write(root / "graphs" / "schema.json", json.dumps({"schema": "something.else"}))
    _write(root / "graphs" / "nodes.json", json.dumps({**doc, "nodes": "abc"}))
    _write(root / "graphs" / "notype.json", json.dumps({**doc, "nodes": [{"id": n["id"]} for n in doc["nodes"]]}))
    _write(root / "graphs" / "dangling.json",
           json.dumps({**doc, "edges": [*doc["edges"], {"source": "nope@1", "target": "nope@2", "rel": "read"}]}))
    _write(root / "graphs" / "cases.json", json.dumps({**doc, "graph": {**doc["graph"], "cases": "x"}}))
    _write(root / "graphs" / "deep.json", DEEP)
    _write(root / "graphs" / "surrogate.json", json.dumps(doc).replace('"text": "', '"text": "\\udcff', 1))
    _write(root / "trace_empty" / "readme.txt", "no graphs here")
    _write(root / "trace_bad" / "g.json", json.dumps({**doc, "nodes": 5}))
    for path in sorted((root / "trace").glob("*.json")):  # the run's graphs, emptied: no failed case is answered
        emptied = {**json.loads(path.read_text()), "nodes": [], "edges": []}
        _write(root / "trace_emptied" / path.name, json.dumps(emptied))
    (root / "cwd").mkdir()
    return root


def _busy_port() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    return sock


# (id, argv with {b} for the base directory, what the one error line must name)
CORPUS: list[tuple[str, list[str], str]] = [
    # memopt run: data
    ("run-data-missing", ["run", "-p", "rag", "--data", "{b}/missing.json"], "missing.json"),
    ("run-data-not-json", ["run", "-p", "rag", "--data", "{b}/notjson.json"], "notjson.json"),
    ("run-data-binary", ["run", "-p", "rag", "--data", "{b}/binary.json"], "binary.json"),
    ("run-data-5000-digit-int", ["run", "-p", "rag", "--data", "{b}/bigint.json"], "bigint.json"),
    ("run-data-deeply-nested", ["run", "-p", "rag", "--data", "{b}/deep.json"], "deep.json"),
    ("run-data-empty-list", ["run", "-p", "rag", "--data", "{b}/empty.json"], "empty.json"),
    ("run-data-wrong-type", ["run", "-p", "rag", "--data", "{b}/badtype.json"], "sample_id"),
    ("run-data-duplicate-ids", ["run", "-p", "rag", "--data", "{b}/dup.json"], "duplicate sample_id"),
    ("run-data-bad-category", ["run", "-p", "rag", "--data", "{b}/badcat.json"], "category"),
    ("run-data-no-sessions", ["run", "-p", "rag", "--data", "{b}/noturns.json"], "session_N"),
    ("run-data-lone-surrogate", ["run", "-p", "rag", "--data", "{b}/surrogate.json"], "$[0].qa[0].question"),
    ("run-data-empty-sample-id", ["run", "-p", "rag", "--data", "{b}/emptyid.json"], "[0].sample_id: ''"),
    ("run-data-empty-question", ["run", "-p", "rag", "--data", "{b}/emptyq.json"], "[0].qa[0].question: empty"),
    ("run-data-sample-id-with-newline", ["run", "-p", "rag", "--data", "{b}/newlineid.json"], "'conv\\n1'"),
    ("run-data-dia-id-twice", ["run", "-p", "rag", "--data", "{b}/dupdia.json"],
     "session_2[0].dia_id: 'D1:1' is the dia_id of an earlier turn too"),  # it became version 2 of turn D1:1
    ("run-data-empty-dia-id", ["run", "-p", "rag", "--data", "{b}/emptydia.json", "--trace", "{b}/t"],
     "session_1[0].dia_id: '': a dia_id must be"),  # tracebacks from the tracer, and a graph without the turn
    ("run-data-dia-id-with-a-version", ["run", "-p", "rag", "--data", "{b}/atdia.json"],
     "session_2[0].dia_id: 'D1:1@2'"),  # read as version 2 of turn D1:1 in the graph
    ("run-data-session-numbered-twice", ["run", "-p", "rag", "--data", "{b}/session01.json"],
     "conversation.session_01: a second session 1"),
    ("run-data-category-true", ["run", "-p", "rag", "--data", "{b}/boolcat.json"],
     "[0].qa[0].category: expected an integer 1-5, found True"),
    ("run-data-answer-a-list", ["run", "-p", "rag", "--data", "{b}/listanswer.json"],
     "[0].qa[0].answer: expected the gold answer as text or a number, found ['x']"),  # it was scored against "['x']"
    ("run-trace-ids-share-a-file", ["run", "-p", "rag", "--data", "{b}/hashcollision.json", "--trace", "{b}/t"],
     "would both be written to the file conv_1-"),
    ("run-data-a-directory", ["run", "-p", "rag", "--data", "{b}/a_dir"], "a_dir"),
    ("run-synth-unknown-option", ["run", "-p", "rag", "--data", "synthetic:bogus=1"], "bogus=1"),
    ("run-synth-5000-digits", ["run", "-p", "rag", "--data", f"synthetic:seed={BIG}"], "seed"),
    ("run-synth-zero", ["run", "-p", "rag", "--data", "synthetic:conversations=0"], ":conversations=0,sessions=8"),
    ("run-synth-huge", ["run", "-p", "rag", "--data", "synthetic:conversations=100000000"], "conversations"),
    ("run-conversations-unknown", ["run", "-p", "rag", "--data", DATA, "--conversations", "nope"], "nope"),
    ("run-conversations-no-id", ["run", "-p", "rag", "--data", DATA, "--conversations", ","], "--conversations ','"),
    ("bench-feedback-variants-no-id", ["bench", "feedback", "--variants", " , "], "--variants ' , '"),
    # memopt run: pipeline, knobs, LMs, prompts, outputs
    ("run-pipeline-unknown", ["run", "-p", "mem9", "--data", DATA], "mem9"),
    ("run-knob-negative", ["run", "-p", "rag", "--data", DATA, "--knob", "top_k=-3"], "top_k"),
    ("run-knob-zero", ["run", "-p", "rag", "--data", DATA, "--knob", "chunk_size=0"], "chunk_size"),
    ("run-knob-5000-digits", ["run", "-p", "rag", "--data", DATA, "--knob", f"top_k={BIG}"], "top_k"),
    ("run-knob-unknown", ["run", "-p", "rag", "--data", DATA, "--knob", "topk=3"], "topk"),
    ("run-lm-bad-spec", ["run", "-p", "rag", "--data", DATA, "--lm", "not a spec"], "not a spec"),
    ("run-judge-lm-bad-spec", ["run", "-p", "rag", "--data", DATA, "--judge-lm", "sim@http://x"], "sim@http://x"),
    ("run-prompts-missing", ["run", "-p", "rag", "--data", DATA, "--prompts", "{b}/nowhere"], "nowhere"),
    ("run-prompts-not-utf8", ["run", "-p", "rag", "--data", DATA, "--prompts", "{b}/prompts_binary"], "answer.md"),
    ("optimize-experiment-is-a-directory", ["optimize", "{b}/a_dir"], "{b}/a_dir: is a directory; give a file"),
    ("run-data-is-a-device", ["run", "-p", "rag", "--data", "/dev/null"], "/dev/null: is not a regular file"),
    ("run-data-empty", ["run", "-p", "rag", "--data", ""], "the data source is empty"),
    ("run-data-without-questions", ["run", "-p", "rag", "--data", "{b}/noqa.json"],
     "noqa.json: no sample has a question"),
    ("run-prompt-file-too-big", ["run", "-p", "rag", "--data", DATA, "--prompts", "{b}/prompts_huge"],
     "prompts_huge/rag/answer.md is 100,001 bytes"),
    ("check-prompts-file-too-big", ["check-prompts", "{b}/prompts_huge"], "answer.md is 100,001 bytes"),
    ("run-prompts-no-pipeline", ["run", "-p", "rag", "--data", DATA, "--prompts", "{b}/prompts_empty"],
     "prompts_empty"),
    ("run-prompt-of-no-operation", ["run", "-p", "rag", "--data", DATA, "--prompts", "{b}/prompts_typo"],
     "rag/anwser.md is the prompt of no operation of rag"),
    ("check-prompts-prompt-of-no-operation", ["check-prompts", "{b}/prompts_typo"], "rag/anwser.md"),
    ("run-prompt-with-a-nul", ["run", "-p", "rag", "--data", DATA, "--prompts", "{b}/prompts_nul"],
     "answer.md holds a NUL character"),
    ("run-knobs-file-fraction", ["run", "-p", "rag", "--data", DATA, "--prompts", "{b}/prompts_knobs_fraction"],
     "rag/knobs.yaml: knobs.top_k: 2.7 is not a whole number"),  # it ran with top_k=2
    ("run-knobs-file-infinite", ["run", "-p", "rag", "--data", DATA, "--prompts", "{b}/prompts_knobs_infinite"],
     "rag/knobs.yaml: not a knobs file (cannot convert float infinity"),
    ("export-knobs-file-scores-not-a-mapping", ["export", "{b}/prompts_knobs_scores", "--format", "text", "--out",
                                                "{b}/t"], "rag/knobs.yaml: not a knobs file"),
    ("run-out-is-a-directory", ["run", "-p", "rag", "--data", DATA, "--out", "{b}/a_dir"], "a_dir"),
    ("run-out-under-a-file", ["run", "-p", "rag", "--data", DATA, "--out", "{b}/a_file/r.json"], "a_file"),
    ("run-trace-is-a-file", ["run", "-p", "rag", "--data", DATA, "--trace", "{b}/a_file"], "a_file"),
    # memopt optimize
    ("optimize-missing-file", ["optimize", "{b}/exp/missing.yaml"], "missing.yaml"),
    ("optimize-binary-yaml", ["optimize", "{b}/exp/binary.yaml"], "binary.yaml"),
    ("optimize-not-a-mapping", ["optimize", "{b}/exp/list.yaml"], "list.yaml"),
    ("optimize-unknown-key", ["optimize", "{b}/exp/typo.yaml"], "roundz"),
    ("optimize-5000-digit-int", ["optimize", "{b}/exp/bigint.yaml"], "bigint.yaml"),
    ("optimize-deeply-nested-yaml", ["optimize", "{b}/exp/deep.yaml"], "deep.yaml"),
    ("optimize-key-written-twice", ["optimize", "{b}/exp/twice.yaml"], "'rounds' is written twice"),
    ("optimize-experiment-name-too-long", ["optimize", "{b}/exp/longname.yaml"],
     "mlflow.experiment: String should have at most 500 characters"),
    ("optimize-experiment-name-with-a-line-break", ["optimize", "{b}/exp/blankname.yaml"],
     "mlflow.experiment: Value error, a name with text and no line breaks"),
    ("run-out-of-blanks", ["run", "-p", "rag", "--data", DATA, "--out", " "], "--out ' ': a file name of blanks only"),
    ("optimize-attribution-unknown", ["optimize", "{b}/exp/ok.yaml", "--attribution", "telepathy"], "telepathy"),
    ("optimize-optimizer-unknown", ["optimize", "{b}/exp/ok.yaml", "--optimizer", "annealing"], "annealing"),
    ("optimize-knob-negative", ["optimize", "{b}/exp/negknob.yaml"], "top_k"),
    ("optimize-search-zero", ["optimize", "{b}/exp/zerosearch.yaml"], "top_k"),
    ("optimize-lm-bad-spec", ["optimize", "{b}/exp/badlm.yaml"], "lm.judge: LM spec 'not a spec'"),
    ("optimize-prompts-missing", ["optimize", "{b}/exp/noprompts.yaml"], "nowhere"),
    ("optimize-split-not-a-number", ["optimize", "{b}/exp/nansplit.yaml"], "nansplit.yaml: data.split"),
    ("optimize-one-conversation", ["optimize", "{b}/exp/onesplit.yaml"], "conversation"),
    ("optimize-data-missing", ["optimize", "{b}/exp/ok.yaml", "--data", "{b}/missing.json"], "missing.json"),
    ("optimize-resume-traversal", ["optimize", "{b}/exp/ok.yaml", "--resume", "../../x"], "../../x"),
    ("optimize-resume-unknown", ["optimize", "{b}/exp/ok.yaml", "--resume", "0" * 32,
                                 "--tracking-uri", "sqlite:///{b}/none.db"], "0" * 32),
    ("optimize-tracking-uri-bad", ["optimize", "{b}/exp/ok.yaml", "--tracking-uri", "nosuch://store"],
     "nosuch://store"),
    ("optimize-store-under-a-file", ["optimize", "{b}/exp/ok.yaml", "--tracking-uri", "sqlite:///{b}/a_file/m.db"],
     "sqlite:///{b}/a_file/m.db: cannot open the store"),
    ("optimize-out-is-a-directory", ["optimize", "{b}/exp/ok.yaml", "--out", "{b}/a_dir"], "a_dir"),
    ("optimize-out-under-a-file", ["optimize", "{b}/exp/ok.yaml", "--out", "{b}/a_file/s.json"], "a_file"),
    ("optimize-out-is-its-experiment", ["optimize", "{b}/exp/ok.yaml", "--out", "{b}/exp/ok.yaml"],
     "--out {b}/exp/ok.yaml: names {b}/exp/ok.yaml, a file this command reads or writes"),
    ("run-out-is-its-data", ["run", "-p", "rag", "--data", "{b}/good.json", "-n", "1", "-o", "{b}/good.json"],
     "names {b}/good.json, a file this command reads or writes"),
    ("run-out-is-a-graph-of-its-trace", ["run", "-p", "rag", "--data", DATA, "-n", "1", "-o", "{graph}", "--trace",
                                         "{b}/trace"], "names {graph}, a file this command reads or writes"),
    ("attribute-out-is-its-results", ["attribute", "-r", "{b}/results.json", "-t", "{b}/trace", "-o",
                                      "{b}/results.json"], "names {b}/results.json"),
    ("attribute-out-is-one-of-its-graphs", ["attribute", "-r", "{b}/results.json", "-t", "{b}/trace", "-o", "{graph}"],
     "names {graph}"),
    ("show-out-is-its-graph", ["show", "{graph}", "-o", "{graph}"], "--out {graph}: names {graph}"),
    ("bench-merge-out-is-a-report", ["bench", "merge", "{b}/good.json", "--out", "{b}/good.json"],
     "names {b}/good.json"),
    ("optimize-override-into-a-scalar", ["optimize", "{b}/exp/scalarbudget.yaml", "--budget", "300"],
     "scalarbudget.yaml: budget: must be a mapping"),
    ("optimize-out-where-nothing-is-written", ["optimize", "{b}/exp/ok.yaml", "--out", "/proc/memopt-s.json"],
     "--out /proc/memopt-s.json: cannot write in /proc"),  # os.access says yes to root there: a probe file says no
    # memopt attribute
    ("report-source-missing", ["report", "{b}/nowhere", "-o", "{b}/cwd/report"], "nowhere"),
    ("report-no-attributions", ["report", "{b}/trace", "-o", "{b}/cwd/report"], "attributions.jsonl"),
    ("report-attributions-not-jsonl", ["report", "{b}/trace", "-a", "{b}/notjson.json", "-o", "{b}/cwd/report"],
     "notjson.json: line 1"),
    ("label-dir-missing", ["label", "{b}/nowhere"], "nowhere"),
    ("label-no-attributions", ["label", "{b}/trace"], "attributions.jsonl"),
    ("attribute-results-missing", ["attribute", "-r", "{b}/missing.json", "-t", "{b}/trace"], "missing.json"),
    ("attribute-results-not-results", ["attribute", "-r", "{b}/good.json", "-t", "{b}/trace"], "good.json"),
    ("attribute-results-deep", ["attribute", "-r", "{b}/deep.json", "-t", "{b}/trace"], "deep.json"),
    ("attribute-trace-missing", ["attribute", "-r", "{b}/results.json", "-t", "{b}/nowhere"], "nowhere"),
    ("attribute-trace-empty", ["attribute", "-r", "{b}/results.json", "-t", "{b}/trace_empty"], "trace_empty"),
    ("attribute-trace-malformed", ["attribute", "-r", "{b}/results.json", "-t", "{b}/trace_bad"], "g.json"),
    ("attribute-graphs-without-answers", ["attribute", "-r", "{b}/results.json", "-t", "{b}/trace_emptied"],
     "the graph holds no answer to it"),
    ("attribute-results-of-a-newer-memopt", ["attribute", "-r", "{b}/future_results.json", "-t", "{b}/trace"],
     "future_results.json: results schema_version 99; this memopt reads version 1"),  # read as version 1
    ("attribute-other-run", ["attribute", "-r", "{b}/other_results.json", "-t", "{b}/trace"], "other_results.json"),
    ("attribute-method-unknown", ["attribute", "-r", "{b}/results.json", "-t", "{b}/trace", "-m", "dowsing"],
     "dowsing"),
    ("attribute-judge-bad-spec", ["attribute", "-r", "{b}/results.json", "-t", "{b}/trace", "--judge-lm", "a b"],
     "a b"),
    ("attribute-out-is-a-directory", ["attribute", "-r", "{b}/results.json", "-t", "{b}/trace", "-o", "{b}/a_dir"],
     "a_dir"),
    # memopt show
    ("show-missing", ["show", "{b}/graphs/missing.json", "-o", "{b}/v.html"], "missing.json"),
    ("show-trace-id-store-not-a-database", ["show", "--trace-id", "tr-1", "--tracking-uri", "sqlite:///{b}/notjson.json",
                                            "-o", "{b}/v.html"], "file is not a database"),
    ("show-not-json", ["show", "{b}/graphs/notjson.json", "-o", "{b}/v.html"], "notjson.json"),
    ("show-wrong-schema", ["show", "{b}/graphs/schema.json", "-o", "{b}/v.html"], "schema.json"),
    ("show-nodes-not-a-list", ["show", "{b}/graphs/nodes.json", "-o", "{b}/v.html"], "nodes.json"),
    ("show-nodes-without-type", ["show", "{b}/graphs/notype.json", "-o", "{b}/v.html"], "notype.json"),
    ("show-dangling-edge", ["show", "{b}/graphs/dangling.json", "-o", "{b}/v.html"], "dangling.json"),
    ("show-cases-not-a-list", ["show", "{b}/graphs/cases.json", "-o", "{b}/v.html"], "cases.json"),
    ("show-lone-surrogate", ["show", "{b}/graphs/surrogate.json", "-o", "{b}/v.html"], "surrogate.json: $.nodes["),
    ("show-deeply-nested", ["show", "{b}/graphs/deep.json", "-o", "{b}/v.html"], "deep.json"),
    ("show-out-is-a-directory", ["show", "{graph}", "-o", "{b}/a_dir"], "a_dir"),
    ("show-png-under-a-file", ["show", "{graph}", "-o", "{b}/v.html", "--png", "{b}/a_file/v.png"], "a_file"),
    # memopt export
    ("export-source-traversal", ["export", "../../x", "--format", "text", "--out", "{b}/t"], "../../x"),
    ("export-format-unknown", ["export", "{b}/prompts_binary", "--format", "yaml", "--out", "{b}/t"], "yaml"),
    ("export-run-unknown", ["export", "f" * 32, "--format", "text", "--out", "{b}/t",
                            "--tracking-uri", "sqlite:///{b}/none.db"], "f" * 32),
    ("export-prompts-empty", ["export", "{b}/prompts_empty", "--format", "text", "--out", "{b}/t"], "prompts_empty"),
    ("export-prompts-not-utf8", ["export", "{b}/prompts_binary", "--format", "text", "--out", "{b}/t"], "answer.md"),
    ("export-out-is-a-directory", ["export", "{b}/prompts_binary", "--format", "mem0", "--out", "{b}/a_dir"],
     "a_dir"),
    # memopt check-prompts
    ("check-prompts-source-traversal", ["check-prompts", "../../x"], "../../x"),
    ("check-prompts-run-unknown", ["check-prompts", "f" * 32, "--tracking-uri", "sqlite:///{b}/none.db"], "f" * 32),
    ("check-prompts-prompts-empty", ["check-prompts", "{b}/prompts_empty"], "prompts_empty"),
    ("check-prompts-not-utf8", ["check-prompts", "{b}/prompts_binary"], "answer.md"),
    # memopt data synth
    ("synth-out-is-a-directory", ["data", "synth", "--out", "{b}/a_dir"], "a_dir"),
    ("synth-out-under-a-file", ["data", "synth", "--out", "{b}/a_file/x.json"], "a_file"),
    # memopt serve, lm-check, mem0 check
    ("serve-public-host", ["serve", "--host", "0.0.0.0"], "0.0.0.0"),
    ("serve-bad-status", ["serve", "--status", "418"], "418"),
    ("serve-port-in-use", ["serve", "--port", "{port}"], "{port}"),
    ("systems-unknown", ["systems", "nosuch"], "nosuch"),
    ("systems-path-as-name", ["systems", "../../x"], "../../x"),
    ("plugins-unknown-kind", ["plugins", "--kind", "rerankers"], "rerankers"),
    ("lm-check-bad-spec", ["lm-check", "--lm", "gpt 4"], "gpt 4"),
    ("lm-check-unknown-local-model", ["lm-check", "--lm", "local:gpt2"], "gpt2"),
    ("mem0-config-missing", ["mem0", "check", "--config", "{b}/missing.json"], "missing.json"),
    ("mem0-config-not-json", ["mem0", "check", "--config", "{b}/notjson.json"], "notjson.json"),
    ("attach-config-missing", ["attach", "mem0", "--config", "{b}/missing.yaml", "--trace", "t"], "missing.yaml"),
    ("attach-config-not-yaml", ["attach", "mem0", "--config", "{b}/notjson.json", "--trace", "t"], "notjson.json"),
    ("attach-config-binary", ["attach", "mem0", "--config", "{b}/exp/binary.yaml", "--trace", "t"], "binary.yaml"),
    ("attach-config-deep", ["attach", "mem0", "--config", "{b}/exp/deep.yaml", "--trace", "t"], "deep.yaml"),
    ("attach-config-key-twice", ["attach", "mem0", "--config", "{b}/exp/twice.yaml", "--trace", "t"],
     "'rounds' is written twice"),
    ("attach-answers-binary", ["attach", "mem0", "--config", "{b}/exp/typo.yaml", "--answers", "{b}/binary.json",
                               "--trace", "t"], "binary.json"),
    # memopt worker
    ("worker-missing-file", ["worker", "{b}/exp/missing.yaml", "--storage", "sqlite:///{b}/trials.db"],
     "missing.yaml"),
    ("worker-storage-not-a-url", ["worker", "{b}/exp/ok.yaml", "--storage", "redis://cache"], "redis://cache"),
    ("worker-storage-unreachable", ["worker", "{b}/exp/ok.yaml", "--storage", "sqlite:///{b}/no/such/dir/t.db"],
     "no/such/dir"),
    ("worker-storage-missing", ["worker", "{b}/exp/ok.yaml", "--storage", "sqlite:///{b}/trials.db", "--join",
                                "nosuchrun", "--wait", "0"], "trials.db"),
    # memopt bench
    ("bench-run-data-missing", ["bench", "run", "--data", "{b}/missing.json"], "missing.json"),
    ("bench-trace-pipeline-unknown", ["bench", "trace", "-p", "mem9", "--data", DATA], "mem9"),
    ("bench-optimize-missing", ["bench", "optimize", "{b}/exp/missing.yaml"], "missing.yaml"),
    ("bench-latency-experiment-missing", ["bench", "latency", "--experiment", "{b}/exp/missing.yaml"], "missing.yaml"),
    ("bench-attribution-cases-missing", ["bench", "attribution", "--cases", "{b}/missing.json"], "missing.json"),
    ("bench-attribution-cases-dir-is-a-file", ["bench", "attribution", "--pipelines", "mem0", "--methods", "memtrace",
                                               "--data", DATA, "--cases-dir", "{b}/a_file"], "--cases-dir"),
    ("bench-attribution-cases-dir-under-a-file", ["bench", "attribution", "--pipelines", "mem0", "--data", DATA,
                                                  "--cases-dir", "{b}/a_file/bench"], "a_file"),
    ("bench-merge-run-field-edited", ["bench", "merge", "{b}/bench1.json", "{b}/bench2.json"],
     "bench2.json: runs[0].test_f1_after: expected a number, found [0.5]"),  # a TypeError from statistics
    ("bench-simlm-out-is-a-directory", ["bench", "simlm", "--out", "{b}/a_dir"], "a_dir"),
]


def test_the_corpus_is_large_and_covers_every_command():
    from memopt.cli import app

    commands = {c.name for c in app.registered_commands} | {g.name for g in app.registered_groups}
    covered = {argv[0] for _, argv, _ in CORPUS}
    assert len(CORPUS) >= 40
    assert commands - {"directives"} <= covered  # `directives` takes no input


@pytest.mark.parametrize(("argv", "names"), [(a, n) for _, a, n in CORPUS], ids=[i for i, _, _ in CORPUS])
def test_bad_input_exits_2_with_one_line_naming_it(argv, names, base, monkeypatch, capsys):
    sock = _busy_port()
    port = str(sock.getsockname()[1])
    graph = str(sorted((base / "trace").glob("*.json"))[0])
    fill = {"{b}": str(base), "{port}": port, "{graph}": graph}
    for key, value in fill.items():
        argv = [a.replace(key, value) for a in argv]
        names = names.replace(key, value)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{base}/cwd/mlflow.db")
    before = snapshot(base)
    try:
        code, out, err = _run(argv, base / "cwd", monkeypatch, capsys)
    finally:
        sock.close()
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, (code, out, err)
    assert "Traceback" not in out + err
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert names in lines[0], lines[0]
    assert snapshot(base) == before


def test_bench_trace_refuses_fewer_than_one_session(monkeypatch):
    from typer.testing import CliRunner

    from memopt.bench import trace as bench_trace
    from memopt.cli import app

    def ran(*_args: object) -> None:
        raise AssertionError("the bench ran")

    monkeypatch.setattr(bench_trace, "bench_trace_overhead", ran)
    monkeypatch.setattr(bench_trace, "bench_big_graph", ran)
    for sessions in ("0", "-5"):
        done = CliRunner().invoke(app, ["bench", "trace", "-p", "mem0", "--repeats", "1", "--mlflow-repeats", "0",
                                        "--sessions", sessions, "--data", DATA])
        assert done.exit_code == 2 and "--sessions" in done.output, done.output


def _within(seconds: float, call: Callable[[], object]) -> BaseException | None:
    """The exception ``call`` raised, failing the test if it is still running after ``seconds``."""
    raised: list[BaseException | None] = [None]

    def run() -> None:
        try:
            call()
        except BaseException as e:  # noqa: BLE001 - handed to the test
            raised[0] = e

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still waiting after {seconds} s"
    return raised[0]


@pytest.mark.slow  # over 2 s on a quiet machine (CI runs it with -m slow)
def test_a_failing_big_graph_process_is_one_error_not_an_endless_wait():
    import multiprocessing
    import os

    from memopt.bench.trace import _result_of, bench_big_graph
    from memopt.core.errors import DataError, MemoptError

    error = _within(60, lambda: bench_big_graph(0, "mem0"))
    assert isinstance(error, DataError) and "must be at least 1" in str(error), error
    ctx = multiprocessing.get_context("spawn")
    child = ctx.Process(target=os._exit, args=(3,))  # ends without a result, as when killed for memory
    child.start()
    error = _within(60, lambda: _result_of(child, ctx.Queue()))
    child.join()
    assert isinstance(error, MemoptError) and "exit code 3" in str(error), error


def test_safe_names_are_plain_distinct_and_stay_inside(tmp_path):
    from memopt.core.errors import DataError
    from memopt.core.files import inside, safe_name

    ids = ["conv-30", "../../../../tmp/x/PWNED", "/etc/passwd", "a/b", "a_b", "..", ".hidden", "x" * 300, "日本語",
           "con:q1", "a\\b", "", "a b", safe_name("a b")]  # the last: a plain id spelled as another's hashed name
    names = [safe_name(i, ".json") for i in ids]
    assert names[0] == "conv-30.json" and len(set(names)) == len(ids)
    for name in names:
        assert "/" not in name and "\\" not in name and not name.startswith(".") and len(name) <= 90
        assert inside(tmp_path, name).parent == tmp_path
    for bad in ("../x.json", "/tmp/x.json", "a/../../x.json", ".", ""):
        with pytest.raises(DataError, match="would leave the folder"):
            inside(tmp_path, bad)


def test_sample_ids_cannot_write_outside_the_trace_dir(tmp_path, monkeypatch, capsys):
    """A sample_id like ../../x or /abs/x names a graph file inside --trace, and attribution still finds it."""
    samples = _locomo()
    samples[0]["sample_id"], samples[1]["sample_id"] = "../../../../escaped/PWNED", "/tmp/escaped-abs/PWNED"
    data = _write(tmp_path / "in" / "evil.json", json.dumps(samples))
    work = tmp_path / "a" / "b"
    (work / "cwd").mkdir(parents=True)
    before = snapshot(tmp_path)
    code, out, err = _run(["run", "-p", "rag", "--data", str(data), "--trace", str(work / "trace"),
                           "--out", str(work / "r.json")], work / "cwd", monkeypatch, capsys)
    assert code == 0, err
    new = sorted(set(snapshot(tmp_path)) - set(before))
    assert new == sorted(["a/b/r.json", "a/b/trace", *(f"a/b/trace/{f.name}" for f in (work / "trace").iterdir())])
    assert not Path("/tmp/escaped-abs").exists() and not (tmp_path.parent / "escaped").exists()
    code, out, err = _run(["attribute", "-r", str(work / "r.json"), "-t", str(work / "trace"), "-o",
                           str(work / "a.jsonl")], work / "cwd", monkeypatch, capsys)
    assert code == 0, err
    blamed = [json.loads(line)["case_id"] for line in (work / "a.jsonl").read_text().splitlines()]
    assert any(c.startswith("../../../../escaped/PWNED:") for c in blamed)


def test_an_id_spelled_as_another_ids_file_name_gets_its_own_graph(tmp_path, monkeypatch, capsys):
    """'a b' is written to a_b-<hash>.json; a sample whose id is that very name must not overwrite it."""
    from memopt.core.files import safe_name

    samples = _locomo()
    samples[0]["sample_id"], samples[1]["sample_id"] = "a b", safe_name("a b")
    data = _write(tmp_path / "in.json", json.dumps(samples))
    (tmp_path / "cwd").mkdir()
    code, _, err = _run(["run", "-p", "rag", "--data", str(data), "--trace", str(tmp_path / "trace"), "--out",
                         str(tmp_path / "r.json")], tmp_path / "cwd", monkeypatch, capsys)
    assert code == 0, err
    graphs = {json.loads(p.read_text())["graph"]["conversation"] for p in (tmp_path / "trace").glob("*.json")}
    assert graphs == {"a b", safe_name("a b")}


def test_artifact_names_cannot_leave_the_run(tmp_path):
    from memopt.core.errors import ConfigError
    from memopt.tracking import Tracker

    tracker = Tracker(f"sqlite:///{tmp_path}/mlflow.db")
    for bad in ("../../evil.html", "/tmp/evil.html", "graphs/../../x.html"):
        with pytest.raises(ConfigError, match="would leave the run's artifact folder"):
            tracker.log_text("x", bad)
    assert not any(tmp_path.iterdir())  # refused before the store is even opened


def test_attribute_refuses_results_and_graphs_of_different_runs(base, tmp_path):
    """Same data and pipeline but another run (--limit) → refused by run id; old files without ids → by content."""
    from memopt.attribution.attribute_run import attribute_run
    from memopt.core.errors import DataError
    from memopt.evaluate.pipeline import run_pipeline
    from memopt.evaluate.run import RunResult
    from memopt.judge.judges import make_judge

    judge = make_judge("lexical")
    limited = run_pipeline("rag", DATA, judge_lm="sim", limit=4)
    with pytest.raises(DataError, match=rf"a graph of run \w+, but limited.json are of run {limited.run_id}"):
        attribute_run(limited, base / "trace", judge, source="limited.json")
    full = RunResult.load(base / "results.json")
    assert attribute_run(full, base / "trace", judge)  # the same run: attributed
    old = tmp_path / "old"
    old.mkdir()
    for path in (base / "trace").glob("*.json"):  # graphs written before run ids existed
        doc = json.loads(path.read_text())
        doc["graph"].pop("run_id")
        (old / path.name).write_text(json.dumps(doc))
    full.run_id = None
    assert len(attribute_run(full, old, judge)) == len(attribute_run(RunResult.load(base / "results.json"),
                                                                    base / "trace", judge))
    other = RunResult.load(base / "other_results.json")
    other.run_id = None
    with pytest.raises(DataError, match="results and trace come from different runs"):
        attribute_run(other, old, judge, source="other.json")


def test_a_failed_write_leaves_no_temporary_file(tmp_path):
    from memopt.core.errors import DataError
    from memopt.core.files import write_atomic

    (tmp_path / "out").mkdir()
    with pytest.raises(DataError, match=r"out: cannot be written \(.*\); nothing was written there"):
        write_atomic(tmp_path / "out", "a directory is in the way")
    (tmp_path / "blocker").write_text("kept")
    with pytest.raises(DataError, match=r"s.json: cannot be written"):  # its folder cannot be made: a file is there
        write_atomic(tmp_path / "blocker" / "s.json", "x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocker", "out"] and not any((tmp_path / "out").iterdir())
    assert (tmp_path / "blocker").read_text() == "kept"
    write_atomic(tmp_path / "ok.txt", "written")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocker", "ok.txt", "out"]
    assert (tmp_path / "ok.txt").read_text() == "written"


def test_prompt_files_cannot_be_named_outside_their_folder(tmp_path):
    from memopt.core.errors import PromptError
    from memopt.systems.prompts import prompt_path, write_prompts

    assert prompt_path("mem0", "extract", tmp_path) == tmp_path / "mem0" / "extract.md"
    for pipeline, op in (("mem0", "../../escaped"), ("../x", "extract"), ("mem0", "/tmp/abs")):
        with pytest.raises(PromptError, match="not a plain file name"):
            write_prompts(pipeline, {op: "text"}, tmp_path / "out")  # e.g. op names from a tampered checkpoint
    assert not (tmp_path / "out").exists() and not (tmp_path.parent / "escaped.md").exists()


def test_a_byte_order_mark_is_no_part_of_a_file(tmp_path, monkeypatch, capsys):
    """A UTF-8 BOM (as Windows editors write it) before a data file or a prompt file is ignored: the data loads, and
    the prompt is the same instruction (same hash), not one starting with an invisible character."""
    from memopt.core.files import read_json
    from memopt.systems.prompts import SEED_PROMPTS, load_prompts, prompt_hash

    bom = b"\xef\xbb\xbf"
    data = _write(tmp_path / "data.json", bom + json.dumps(_locomo()).encode())
    assert read_json(data, missing="") == _locomo()
    for op in ("answer", "rewrite_query"):
        _write(tmp_path / "prompts" / "rag" / f"{op}.md", bom + (SEED_PROMPTS / "rag" / f"{op}.md").read_bytes())
    texts = load_prompts("rag", ["answer", "rewrite_query"], tmp_path / "prompts")
    seed = load_prompts("rag", ["answer", "rewrite_query"])
    assert {op: prompt_hash(t) for op, t in texts.items()} == {op: prompt_hash(t) for op, t in seed.items()}
    (tmp_path / "cwd").mkdir()
    code, _, err = _run(["run", "-p", "rag", "--data", str(data), "--prompts", str(tmp_path / "prompts"), "--out",
                         str(tmp_path / "r.json")], tmp_path / "cwd", monkeypatch, capsys)
    assert code == 0, err


@pytest.mark.slow  # over 4 s on a quiet machine (CI runs it with -m slow)
@pytest.mark.parametrize("seed", [-5, 2**32 - 1])
def test_any_integer_seed_optimizes(seed, tmp_path, monkeypatch, capsys):
    """The seed plus the round seeds Optuna's sampler, which takes 0 to 2**32 - 1 only: a negative seed or one at the
    top ended round 1 in a traceback from numpy, after round 0's LM calls."""
    exp = _write(tmp_path / "exp.yaml", f"pipeline: rag\ndata: {{source: '{OPT_DATA}'}}\nrounds: 1\nseed: {seed}\n")
    (tmp_path / "cwd").mkdir()
    code, _, err = _run(["optimize", str(exp), "--tracking-uri", f"sqlite:///{tmp_path}/mlflow.db"], tmp_path / "cwd",
                        monkeypatch, capsys)
    assert code == 0, err
    assert "round 1/1" in err


def test_a_server_delay_of_more_than_an_hour_is_refused():
    """`serve --delay inf` (or 1e300) started a server whose every answer was a 500 from time.sleep's OverflowError
    (`bench latency` and `bench workers` pass their --delay to it and take the same bound)."""
    from typer.testing import CliRunner

    from memopt.cli import app

    sock = _busy_port()  # were --delay taken, serve would stop on the port in use instead, naming the port
    try:
        for delay in ("inf", "1e300", "3601"):
            done = CliRunner().invoke(app, ["serve", "--delay", delay, "--port", str(sock.getsockname()[1])])
            assert done.exit_code == 2 and "--delay" in done.output, done.output
    finally:
        sock.close()
