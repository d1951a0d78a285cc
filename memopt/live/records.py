"""The record format of a tapped Mem0: versioned JSON lines, plain data only (no Mem0 objects).

A recording can be made in production and attributed later, on another machine, without Mem0.
The first line is the header, every other line one record::

    {"schema": "memopt.mem0_records", "schema_version": 2, "type": "header", "mem0_version": "1.0.11",
     "major": 1, "prompts": {"custom_fact_extraction_prompt": ..., ...}, "started_at": ...}

Each record has ``type``, ``seq`` (1, 2, … in recording order) and ``call`` (the id of the public
``Memory.add`` / ``Memory.search`` call it happened in, or null outside any). Types:

- ``add`` / ``search`` (``phase`` ``start`` or ``end``): the public call, its ``user_id``, ``metadata``,
  ``messages`` (add) or ``query`` and ``limit`` (search), at ``start`` the wall-clock time ``at`` (ISO 8601;
  recordings made before it existed have none); at ``end`` its ``results`` as Mem0 returned them, or ``error``.
- ``llm``: one ``llm.generate_response`` call: ``messages`` sent, ``response`` text, ``error``.
- ``embed``: ``text`` (a list for ``embed_batch``) and ``action`` of one embedding call (no vector).
- ``vs.search`` / ``vs.keyword_search``: ``query``, ``limit``, ``filters``, ``hits`` (``[{id, text, score}]``
  in rank order).
- ``vs.insert`` / ``vs.update`` / ``vs.delete`` / ``vs.get``: ``ids`` and the payload ``text`` and
  ``metadata`` written (``vs.get``: the text read).
- ``history``: ``rows`` of Mem0's SQLite ``history`` table written during the call (``rowid``,
  ``memory_id``, ``old_memory``, ``new_memory``, ``event``, ``created_at``), read by rowid after it.
- ``session``: an annotation by the caller before an ``add``: ``user_id``, ``index``, ``date_time``,
  ``dia_ids`` (one per message), ``speakers``.
- ``case``: a question the application answered: ``user_id``, ``case_id``, ``question``, ``answer``,
  ``search_call`` (the ``Memory.search`` call whose hits it read), ``at`` (wall-clock), optional ``date`` (the day
  it was asked, when the application says), ``gold``, ``evidence``, ``category``, ``context``. A ``search`` no
  case names is a question too, its answer unknown (a cases file gives it: `memopt.attribution.cases`).
- ``end``: the last record of a recording closed in full (``records``: how many came before it). A
  recording without it is *incomplete*: a write failed (the disk filled) or the process recording it stopped.

A recording is never overwritten or truncated: a writer refuses a path that exists (record again into a new
folder, or move the old recording away). A write the system refuses stops the recording with one `DataError`
(every later write is refused with it, so a call Mem0 runs in its own threads cannot lose a record silently),
and the recording stays incomplete. Reading checks every line: UTF-8 JSON of a sane depth and number size, a
known record type, every field of the kind the readers expect (`memopt.live.schema`); a damaged line is one
`DataError` naming the file, the line and the field.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import IO, Any

from memopt.core.errors import DataError
from memopt.live.schema import HEADER, RECORDS, problem

__all__ = ["SCHEMA", "SCHEMA_VERSION", "RECORD_TYPES", "RecordWriter", "read_records"]

SCHEMA = "memopt.mem0_records"
SCHEMA_VERSION = 2  # 2: the ``end`` record; version 1 recordings (no end record) are read as they are
READABLE = (1, 2)
RECORD_TYPES = frozenset(RECORDS) - {"end"}


def _plain(value: Any) -> Any:
    """A JSON-safe copy of a value (objects Mem0 passes around become their string form)."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if hasattr(value, "model_dump"):
        return _plain(value.model_dump())
    return str(value)


class RecordWriter:
    """Writes a recording: a new file (an existing one is refused, never truncated), one flushed line per record,
    thread-safe; `close` ends it with the ``end`` record unless a write failed (see the module docstring)."""

    def __init__(self, path: str | Path, header: dict[str, Any]) -> None:
        from memopt.lm.redaction import redact_tree

        self.path = Path(path)
        self._redact = redact_tree
        self.failure: DataError | None = None
        self._lock = threading.Lock()
        self._seq = 0
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file: IO[str] | None = self.path.open("x", encoding="utf-8")
        except FileExistsError:
            raise DataError(f"{self.path}: a recording is already there; memopt never overwrites one (its LLM calls "
                            "were paid for). Record into a new folder (--trace), or move the old recording "
                            "away.") from None
        except OSError as e:
            raise DataError(f"{self.path}: the recording cannot be created ({e.strerror or e}).") from None
        self._write({"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "type": "header", **header})

    def _write(self, record: dict[str, Any]) -> None:
        assert self._file is not None
        try:
            self._file.write(json.dumps(self._redact(_plain(record)), ensure_ascii=False) + "\n")
            self._file.flush()
        except OSError as e:
            self.failure = DataError(
                f"{self.path}: record {self._seq} could not be written ({e.strerror or e}); the recording stopped "
                "there and is incomplete (it has no end record). Free space, then record again into a new folder.")
            self._close_quietly()
            raise self.failure from None

    def _close_quietly(self) -> None:
        if self._file is not None:
            try:
                self._file.close()
            except OSError:
                pass
            self._file = None

    def write(self, kind: str, call: int | None, **fields: Any) -> int:
        """Append one record of type ``kind``; returns its sequence number (the failure of an earlier write, or
        of this one, is raised: `failure`)."""
        with self._lock:
            if self.failure is not None:
                raise self.failure
            if self._file is None:
                raise ValueError(f"{self.path}: the recording is closed")
            self._seq += 1
            self._write({"type": kind, "seq": self._seq, "call": call, **fields})
            return self._seq

    def close(self) -> None:
        """End the recording with its ``end`` record (not after a failed write) and close the file."""
        with self._lock:
            if self._file is not None and self.failure is None:
                try:
                    self._write({"type": "end", "seq": self._seq + 1, "call": None, "records": self._seq})
                except DataError:
                    return
            self._close_quietly()


def _damaged(path: Path, number: int, what: str) -> DataError:
    return DataError(f"{path}:{number}: {what}; the recording is damaged.")


def _parse(path: Path, number: int, raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise _damaged(path, number, "not UTF-8 text (binary content)") from None
    except json.JSONDecodeError as e:
        raise _damaged(path, number, f"not valid JSON ({e.msg})") from None
    except RecursionError:
        raise _damaged(path, number, "JSON nested too deeply to read") from None
    except ValueError:  # Python's limit on the digits of an integer
        raise _damaged(path, number, "a number too long to read (more than 4,300 digits)") from None


def read_records(path: str | Path, *, partial: bool = False) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header and the records of a recording, every line checked (see the module docstring); a damaged or
    foreign file is a `DataError` naming the line and the field. An incomplete recording (no ``end`` record) is a
    `DataError` too, unless ``partial``: then what it holds is read, a last line cut short included."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such recording (write one with `memopt attach mem0 --trace DIR` or "
                        "`memopt.live.trace_mem0(memory, out=...)`).")
    header: dict[str, Any] | None = None
    records: list[dict[str, Any]] = []
    ended, number = False, 0
    with path.open("rb") as f:
        lines = list(enumerate(f, 1))
    for number, raw in lines:
        if not raw.strip():
            continue
        if ended:
            raise _damaged(path, number, "a line after the end record")
        try:
            record = _parse(path, number, raw)
        except DataError:
            if number == lines[-1][0] and not raw.endswith(b"\n") and header is not None:
                if partial:
                    break  # the line being written when the recording stopped
                raise _incomplete(path, number) from None
            raise
        if header is None:
            header = _header(path, number, record)
            continue
        kind = record.get("type") if isinstance(record, dict) else type(record).__name__
        if not isinstance(record, dict) or kind not in RECORDS:
            raise DataError(f"{path}:{number}: unknown record type {kind!r}; known: "
                            f"{', '.join(sorted(RECORD_TYPES))}.")
        found = problem(record, RECORDS[kind], "")
        if found:
            raise _damaged(path, number, f"{kind} record: {found}")
        if kind == "end":
            ended = True
            continue
        records.append(record)
    if header is None:
        raise DataError(f"{path}: an empty recording (no header line).")
    if header.get("schema_version") != 1 and not ended and not partial:
        raise _incomplete(path, number)
    return header, records


def _incomplete(path: Path, number: int) -> DataError:
    return DataError(f"{path}: the recording is incomplete: it ends at line {number} without its end record (a write "
                     "failed, or the process recording it stopped). Record again, or read what it holds with "
                     "memopt.live.read_records(path, partial=True).")


def _header(path: Path, number: int, record: Any) -> dict[str, Any]:
    if not isinstance(record, dict) or record.get("schema") != SCHEMA:
        raise DataError(f"{path}:{number}: not a Mem0 recording (expected a header with \"schema\": \"{SCHEMA}\").")
    if record.get("schema_version") not in READABLE:
        raise DataError(f"{path}: recording schema_version {record.get('schema_version')!r}; this memopt reads "
                        f"versions {', '.join(map(str, READABLE))}.")
    found = problem(record, HEADER, "")
    if found:
        raise _damaged(path, number, f"header: {found}")
    return record
