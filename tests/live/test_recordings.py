"""Recordings are never lost and always read safely: a second recording into one place is refused, a write the
system refuses stops the recording (marked incomplete) with one error, and every damaged line read back is one
`DataError` naming the file, the line and the field — a fuzz over every field of a recording holding every record
type, binary content, 50,000-deep nesting and 5,000-digit numbers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memopt.core.errors import ConfigError, DataError
from memopt.live.graph import build_graphs
from memopt.live.records import RecordWriter, read_records
from tests.live.test_live_mem0 import _hand_written_recording

WRONG = [None, 0, -1, 2.5, True, "x", "", [], {}, [1], ["x"], [None], {"a": 1}, [{"id": []}], 10 ** 30]


def _paths(value: object, path: tuple = ()) -> list[tuple]:
    """Every field path inside a record (dict keys and list indexes, two levels into lists of objects)."""
    out = []
    if isinstance(value, dict):
        for key, inner in value.items():
            out.append((*path, key))
            out += _paths(inner, (*path, key))
    elif isinstance(value, list):
        for i, inner in enumerate(value[:2]):
            out.append((*path, i))
            out += _paths(inner, (*path, i))
    return out


def _set(record: dict, path: tuple, value: object) -> dict:
    copy = json.loads(json.dumps(record))
    node = copy
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return copy


def _read_and_build(path: Path) -> None:
    header, records = read_records(path)
    build_graphs(header, records)


def test_every_single_field_type_change_is_read_whole_or_one_error_naming_file_line_and_field(tmp_path):
    source = _hand_written_recording(tmp_path)
    lines = [json.loads(line) for line in source.read_text().splitlines()]
    damaged = tmp_path / "damaged.jsonl"
    tried = errors = 0
    for number, record in enumerate(lines, 1):
        for path in _paths(record):
            if path in (("schema",), ("schema_version",), ("type",)):
                continue  # what a recording is, checked apart (test_live_mem0)
            for value in WRONG:
                changed = [*lines[:number - 1], _set(record, path, value), *lines[number:]]
                damaged.write_text("\n".join(json.dumps(r) for r in changed) + "\n")
                tried += 1
                try:
                    _read_and_build(damaged)
                except ConfigError as e:  # a version string of a major memopt does not read: said as such
                    assert path == ("mem0_version",) and isinstance(value, str), (path, value, str(e))
                except DataError as e:
                    errors += 1
                    assert f"damaged.jsonl:{number}:" in str(e) and "field" in str(e), (path, value, str(e))
                    assert str(path[0]) in str(e), (path, value, str(e))
    assert tried > 2000 and errors > 500  # many changes are refused; every other one reads and builds whole


@pytest.mark.parametrize("line, said", [
    (b'{"type": "llm", "seq": 3, "call": 1, "response": "\xff\xfe\x00\x81"}\n', "not UTF-8 text"),
    (b"\x00\x01\x02\x03binary\xff\n", "not UTF-8 text"),
    (b'{"type": "llm", "seq": 3, "call": 1, "response": ' + b"[" * 50_000 + b"]" * 50_000 + b"}\n",
     "JSON nested too deeply"),
    (b'{"type": "llm", "seq": ' + b"7" * 5_000 + b', "call": 1}\n', "a number too long to read"),
    (b'{"type": "llm", "seq": 3, "call": 1, "response": ' + b"9" * 5_000 + b"}\n", "a number too long to read"),
])
def test_binary_deep_and_huge_lines_are_one_error_naming_the_line(line, said, tmp_path):
    source = _hand_written_recording(tmp_path).read_bytes().splitlines(keepends=True)
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(b"".join([*source[:2], line, *source[2:]]))
    with pytest.raises(DataError, match=rf"damaged.jsonl:3: {said}.*the recording is damaged"):
        read_records(damaged)


def test_the_case_record_the_tap_writes_reads_back_whole(tmp_path):
    """What `Mem0Tap.answer` writes (its own clock stamp and date included) passes the schema the reader checks."""
    from types import SimpleNamespace

    from memopt.live.tap import Mem0Tap

    path = tmp_path / "records.jsonl"
    tap = SimpleNamespace(writer=RecordWriter(path, {"mem0_version": "1.0.11", "major": 1}), _last_search=None)
    Mem0Tap.answer(tap, "Where does Bea live?", "Lisbon", user_id="bea", case_id="bea:q1", date="2023-05-07")
    tap.writer.close()
    header, records = read_records(path)
    [case] = [r for r in records if r["type"] == "case"]
    assert case["answer"] == "Lisbon" and case["date"] == "2023-05-07" and case["at"][:2] == "20"


def test_a_recording_is_never_overwritten(tmp_path):
    path = tmp_path / "records.jsonl"
    writer = RecordWriter(path, {"mem0_version": "1.0.11", "major": 1})
    writer.write("session", None, user_id="u", index=1, date_time="1 May 2023", dia_ids=[], speakers=[])
    writer.close()
    before = path.read_bytes()
    with pytest.raises(DataError, match="a recording is already there; memopt never overwrites one"):
        RecordWriter(path, {"mem0_version": "1.0.11", "major": 1})
    assert path.read_bytes() == before
    header, records = read_records(path)
    assert header["schema_version"] == 2 and [r["type"] for r in records] == ["session"]


REFUSED = """\
import resource, signal, sys, threading
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # past the limit a write fails (EFBIG) as on a full disk
sys.path.insert(0, sys.argv[2])
from memopt.live.records import RecordWriter
writer = RecordWriter(sys.argv[1], {"mem0_version": "1.0.11", "major": 1})
resource.setrlimit(resource.RLIMIT_FSIZE, (3000, 3000))
failures = []
def write():
    for i in range(100):
        try:
            writer.write("llm", 1, messages=[{"role": "user", "content": "x" * 50}], response="{}")
        except Exception as e:
            failures.append(f"{type(e).__name__}: {e}")
threads = [threading.Thread(target=write) for _ in range(4)]
[t.start() for t in threads]
[t.join() for t in threads]
writer.close()
print(len(failures), len(set(failures)), failures[0])
"""


def test_a_refused_write_stops_the_recording_with_one_error_and_leaves_it_incomplete(tmp_path):
    path = tmp_path / "records.jsonl"
    done = subprocess.run([sys.executable, "-c", REFUSED, str(path), os.getcwd()], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    count, distinct, first = done.stdout.split(" ", 2)
    assert int(count) > 300 and distinct == "1"  # every write after the first failure refused with the same error
    assert first.startswith("DataError: ") and "could not be written" in first and "incomplete" in first
    with pytest.raises(DataError, match=r"records.jsonl: the recording is incomplete: it ends at line \d+ without "
                                        "its end record"):
        read_records(path)
    header, records = read_records(path, partial=True)  # what it holds, a line cut short left out
    assert records and all(r["type"] == "llm" for r in records)


ATTACH = """\
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
limit = int(sys.argv[1])
if limit:
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))  # no file may grow past it: the disk is "full"
sys.argv = ["memopt", "attach", "mem0", *sys.argv[2:]]
from memopt.cli import main
main()
"""


def _attach(tmp_path: Path, trace: str, limit: int = 0) -> subprocess.CompletedProcess:
    (tmp_path / "mem0.json").write_text("{}")
    return subprocess.run([sys.executable, "-c", ATTACH, str(limit), "--config", "mem0.json", "--offline", "--data",
                           "synthetic:conversations=1,sessions=2", "--limit", "2", "--trace", trace],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600,
                          env={**os.environ, "PYTHONWARNINGS": "ignore"})


@pytest.mark.slow  # real Mem0 (offline, on SimLM) in subprocesses
def test_attach_never_replaces_a_recording_and_a_full_disk_is_one_error_and_an_incomplete_recording(tmp_path):
    pytest.importorskip("mem0")
    first = _attach(tmp_path, "t")
    assert first.returncode == 0, first.stderr[-3000:]
    before = {p.name: p.read_bytes() for p in (tmp_path / "t").iterdir()}
    again = _attach(tmp_path, "t")
    assert again.returncode == 2 and "Traceback" not in again.stderr, again.stderr[-3000:]
    assert "a recording is already there; memopt never overwrites one" in again.stderr
    assert {p.name: p.read_bytes() for p in (tmp_path / "t").iterdir()} == before  # not a byte lost
    full = _attach(tmp_path, "full", limit=20_000)
    errors = [line for line in full.stderr.splitlines() if line.startswith("error: ")]
    assert full.returncode == 2 and "Traceback" not in full.stderr, full.stderr[-3000:]
    assert len(errors) == 1 and "records.jsonl: record" in errors[0] and "incomplete" in errors[0], full.stderr
    with pytest.raises(DataError, match="the recording is incomplete"):
        read_records(tmp_path / "full" / "records.jsonl")
    assert read_records(tmp_path / "full" / "records.jsonl", partial=True)[1]
