"""A production recording (no session notes, no answers told to the tap, no gold) read as a trace directory.

The recording is hand-written in the tap's format (its own wording, not Mem0's output): two per-message adds
stamped with their wall-clock time, one ``Memory.search`` the application never reported an answer for.
"""

from __future__ import annotations

import json

from memopt.attribution.attribute_run import attribute_trace
from memopt.judge.judges import LexicalJudge
from memopt.live.records import SCHEMA
from memopt.trace.readers import open_trace


def _recording(path) -> None:
    fixed = "Below is the current content of my memory which I have collected till now."
    fact = "Ola planted a Stella cherry tree"
    records = [
        {"type": "add", "call": 1, "phase": "start", "at": "2023-04-02T10:00:00", "user_id": "ola", "metadata": {},
         "messages": [{"role": "user", "content": "I planted a Stella cherry tree by the shed!"}]},
        {"type": "llm", "call": 1, "messages": [{"role": "system", "content": "Pull out facts."},
                                                {"role": "user", "content": "Input:"}],
         "response": json.dumps({"facts": [fact]})},
        {"type": "llm", "call": 1, "messages": [{"role": "user", "content": f"Decide.\n{fixed}"}],
         "response": json.dumps({"memory": [{"id": "0", "text": fact, "event": "ADD"}]})},
        {"type": "history", "call": 1, "rows": [{"rowid": 1, "memory_id": "m-1", "old_memory": None,
                                                 "new_memory": fact, "event": "ADD"}]},
        {"type": "add", "call": 1, "phase": "end", "results": []},
        {"type": "add", "call": 2, "phase": "start", "at": "2023-04-02T10:01:00", "user_id": "ola", "metadata": {},
         "messages": [{"role": "assistant", "content": "Lovely! Cherries need a sunny spot."}]},
        {"type": "llm", "call": 2, "messages": [{"role": "system", "content": "Pull out facts."},
                                                {"role": "user", "content": "Input:"}],
         "response": json.dumps({"facts": []})},
        {"type": "add", "call": 2, "phase": "end", "results": []},
        {"type": "search", "call": 3, "phase": "start", "at": "2023-06-01T09:00:00", "user_id": "ola",
         "query": "What variety of cherry tree did Ola plant?", "limit": 3},
        {"type": "search", "call": 3, "phase": "end", "results": []},
    ]
    header = {"schema": SCHEMA, "schema_version": 1, "type": "header", "mem0_version": "1.0.11", "major": 1,
              "prompts": {"custom_fact_extraction_prompt": "x" * 5000}}
    path.write_text("\n".join(json.dumps(r) for r in [header, *({"seq": i, **r} for i, r in enumerate(records, 1))])
                    + "\n")


def test_a_recording_alone_is_a_trace_and_a_search_is_a_question(tmp_path):
    trace = tmp_path / "trace"
    trace.mkdir()
    _recording(trace / "records.jsonl")
    (traced,) = open_trace(trace)
    G = traced.graph
    assert (traced.reader, traced.name) == ("mem0_recording", "ola")
    assert [s["date_time"] for s in G.graph["sessions"]] == ["2023-04-02T10:00:00", "2023-04-02T10:01:00"]
    (case,) = G.graph["cases"]
    assert case["question"] == "What variety of cherry tree did Ola plant?" and case["case_id"] == "ola:s3"
    (tmp_path / "cases.jsonl").write_text(json.dumps({"question": "what variety of cherry tree did Ola plant",
                                                      "expected": "Stella", "prediction": "No idea.",
                                                      "graph": "ola"}) + "\n")
    (found,) = attribute_trace(trace, LexicalJudge(), cases_file=tmp_path / "cases.jsonl")
    assert (found.error_type, found.op_id, found.op_name) == ("RetrievalError", "retrieve:ola:s3", "retrieve")
    assert found.question == case["question"] and found.evidence == "retrieved"
