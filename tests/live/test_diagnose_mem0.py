"""The production path on a real Mem0: an application records its own ``Memory`` through the tap (per-message adds,
assistant turns, no gold), and its failures are attributed later from the recording and a cases file alone, in a
process where Mem0 cannot be imported.

The application is `tests/live/chat_app.py` (offline: SimLM behind Mem0's OpenAI client). Its failures are the
questions whose answer lacks what the user expected; the expected blame of each is worked out here from the raw
recording alone (which memories ever held the expected words, which were deleted, which the question's search
returned), not from memopt's graphs. 1.0.11 runs with the mem0 extra; 2.x in a venv of its own (``-k mem0_2x``).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

APP = str(ROOT / "tests" / "live" / "chat_app.py")
EXPECTED = {"Which coffee place did the assistant suggest?": ("Laynes Espresso", "laynes"),
            "Which instrument does Dana play?": ("the cello", "cello"),
            "Where does Dana's sister live?": ("York", "york"),
            "Where does Dana work?": ("the university library in Leeds", "university")}
NO_MEM0 = ("import sys; sys.modules['mem0'] = None; sys.modules['mem0ai'] = None\n"
           "from memopt.cli import main\n"
           "sys.argv = ['memopt', *sys.argv[1:]]\n"
           "main()\n")


def _major() -> int | None:
    try:
        return int(importlib.metadata.version("mem0ai").split(".")[0])
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return None


def _expected_blame(records: list[dict], question: str, keyword: str) -> tuple[str, str]:
    """(error type, what the blamed op is) from the raw recording: 'extract A<call>', 'update A<call>' or 'retrieve'."""
    rows = sorted((row | {"call": r["call"]} for r in records if r["type"] == "history" for row in r["rows"]),
                  key=lambda row: row["rowid"])
    held = {row["memory_id"] for row in rows if keyword in str(row.get("new_memory") or "").lower()}
    if not held:
        said = next(r["call"] for r in records if r["type"] == "add" and r.get("phase") == "start"
                    and keyword in json.dumps(r["messages"]).lower())
        return "ExtractionError", f"extract A{said}"
    live = {m for m in held if not any(row["memory_id"] == m and (row["event"] == "DELETE" or (
        row["event"] == "UPDATE" and keyword not in str(row["new_memory"]).lower())) for row in rows)}
    if not live:
        last = max((row for row in rows if row["memory_id"] in held and row["event"] in ("DELETE", "UPDATE")),
                   key=lambda row: row["rowid"])
        return ("DeletionError" if last["event"] == "DELETE" else "UpdateError"), f"update A{last['call']}"
    search = next(r for r in records if r["type"] == "search" and r.get("phase") == "start" and r["query"] == question)
    hits = next(r for r in records if r["type"] == "search" and r.get("phase") == "end" and r["call"] == search["call"])
    assert not live & {str(h.get("id")) for h in hits["results"]}, "the context held it: not a memory failure"
    return "RetrievalError", "retrieve"


def _diagnose(tmp_path: Path, *, answers: bool) -> None:
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env.update({"HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9",
                "NO_PROXY": "127.0.0.1,localhost", "TMPDIR": str(tmp_path)})
    done = subprocess.run([sys.executable, APP, str(tmp_path), *([] if answers else ["--no-answers"])],
                          capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stderr
    said = dict(line.split(" -> ", 1) for line in done.stdout.splitlines() if " -> " in line)
    failed = [q for q, (_, keyword) in EXPECTED.items() if keyword not in said[q].lower()]
    assert failed, said
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps({"question": q, "expected": EXPECTED[q][0], "graph": "dana",
                                         **({} if answers else {"prediction": said[q]})}) + "\n" for q in failed))
    trace = tmp_path / "trace"
    assert [p.name for p in trace.iterdir()] == ["records.jsonl"]
    out = tmp_path / "attributions.jsonl"
    done = subprocess.run([sys.executable, "-c", NO_MEM0, "attribute", str(trace), "--cases", str(cases),
                           "--judge-lm", "lexical", "--out", str(out)], capture_output=True, text=True, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    from memopt.live import build_graphs, read_records

    header, records = read_records(trace / "records.jsonl")
    G = build_graphs(header, records)["dana"]
    found = [json.loads(line) for line in out.read_text().splitlines()]
    assert [a["question"] for a in found] == failed
    for a in found:
        error_type, blamed = _expected_blame(records, a["question"], EXPECTED[a["question"]][1])
        assert a["op_id"] in G and G.nodes[a["op_id"]]["type"] == "op", a
        assert a["error_type"] == error_type, (a, error_type, blamed)
        operation, _, call = blamed.partition(" ")
        assert a["op_name"] == operation and (not call or a["op_id"] == f"{operation}:dana:{call}"), (a, blamed)
        assert a["evidence"] == "retrieved" and a["case_id"].startswith("dana:")
    print(f"mem0ai {_major()}: " + "; ".join(f"{a['question']} -> {a['error_type']} at {a['op_id']}" for a in found))


@pytest.mark.slow  # the real mem0ai 1.0.11 offline (CI runs it with -m slow)
def test_a_recorded_mem0_app_is_attributed_from_the_recording_and_a_cases_file(tmp_path):
    if importlib.util.find_spec("mem0") is None or _major() != 1:
        pytest.skip('needs the mem0 extra (mem0ai 1.0.11): pip install -e ".[mem0]"')
    _diagnose(tmp_path / "answered", answers=True)
    _diagnose(tmp_path / "searched", answers=False)


@pytest.mark.slow  # the real mem0ai 2.x offline, in a venv of its own (CI: -k mem0_2x)
def test_a_recorded_mem0_2x_app_is_attributed_from_the_recording_and_a_cases_file(tmp_path):
    if importlib.util.find_spec("mem0") is None or _major() != 2:
        pytest.skip("runs in a venv with mem0ai 2.x (the mem0 extra pins 1.0.11)")
    _diagnose(tmp_path / "answered", answers=True)
    _diagnose(tmp_path / "searched", answers=False)
