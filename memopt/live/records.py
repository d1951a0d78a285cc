"""The record format of a tapped Mem0: versioned JSON lines, plain data only (no Mem0 objects).

A recording can be made in production and attributed later, on another machine, without Mem0.
The first line is the header, every other line one record::

    {"schema": "memopt.mem0_records", "schema_version": 1, "type": "header", "mem0_version": "1.0.11",
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
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import IO, Any

from memopt.core.errors import DataError

__all__ = ["SCHEMA", "SCHEMA_VERSION", "RECORD_TYPES", "RecordWriter", "read_records"]

SCHEMA = "memopt.mem0_records"
SCHEMA_VERSION = 1
RECORD_TYPES = frozenset({"add", "search", "llm", "embed", "vs.search", "vs.keyword_search", "vs.insert",
                          "vs.update", "vs.delete", "vs.get", "history", "session", "case"})


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
    """Appends records to a JSONL file (thread-safe, one flushed line per record)."""

    def __init__(self, path: str | Path, header: dict[str, Any]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] | None = self.path.open("w", encoding="utf-8")
        self._lock = threading.Lock()
        self._seq = 0
        self._write({"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "type": "header", **header})

    def _write(self, record: dict[str, Any]) -> None:
        assert self._file is not None
        self._file.write(json.dumps(_plain(record), ensure_ascii=False) + "\n")
        self._file.flush()

    def write(self, kind: str, call: int | None, **fields: Any) -> int:
        """Append one record of type ``kind``; returns its sequence number."""
        with self._lock:
            if self._file is None:
                raise ValueError(f"{self.path}: the recording is closed")
            self._seq += 1
            self._write({"type": kind, "seq": self._seq, "call": call, **fields})
            return self._seq

    def close(self) -> None:
        """Close the file (further writes are refused)."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


def read_records(path: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header and the records of a recording; a damaged or foreign file is a `DataError` naming the line."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such recording (write one with `memopt attach mem0 --trace DIR` or "
                        "`memopt.live.trace_mem0(memory, out=...)`).")
    header: dict[str, Any] | None = None
    records: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                raise DataError(f"{path}:{number}: not valid JSON ({e.msg}); the recording is damaged.") from None
            if header is None:
                if not isinstance(record, dict) or record.get("schema") != SCHEMA:
                    raise DataError(f"{path}:{number}: not a Mem0 recording (expected a header with "
                                    f"\"schema\": \"{SCHEMA}\").")
                if record.get("schema_version") != SCHEMA_VERSION:
                    raise DataError(f"{path}: recording schema_version {record.get('schema_version')!r}; this "
                                    f"memopt reads version {SCHEMA_VERSION}.")
                header = record
                continue
            if not isinstance(record, dict) or record.get("type") not in RECORD_TYPES:
                kind = record.get("type") if isinstance(record, dict) else type(record).__name__
                raise DataError(f"{path}:{number}: unknown record type {kind!r}; known: "
                                f"{', '.join(sorted(RECORD_TYPES))}.")
            records.append(record)
    if header is None:
        raise DataError(f"{path}: an empty recording (no header line).")
    return header, records
