"""The versioned memory store: every ADD / UPDATE / DELETE writes a new version; nothing is overwritten.

Contract:

- One SQLite row per *version* of a memory unit, keyed ``(unit_id, version)``. Unit ids are
  ``{id_prefix}1, {id_prefix}2, ...`` in creation order; versions count from 1. Triggers make the
  table append-only, so a version, once written, never changes.
- Every write advances the store's logical clock `MemoryStore.seq` by one and stamps it on the
  row: ``live(as_of=s)`` and ``search(..., as_of=s)`` show the store exactly as it was after write
  ``s``. A DELETE version keeps the unit's text; a deleted unit cannot be updated or deleted again.
- The op that wrote a version is the explicit ``op_id`` argument, else
  `memopt.systems.events.current_op()`.
- Every write emits a `StoreEvent` (action ADD / UPDATE / DELETE); `search`, `live` and `get` emit
  read events (SEARCH / LIVE / GET). Events are built only while someone listens.
- `search` ranks the live units with BM25 (bm25s; English stopwords, Porter stems). History is
  append-only, so the view at logical time ``min(as_of, seq)`` never changes once written: that
  time keys a small cache of indexes, and an index is rebuilt only after the view changed.
- Unknown unit ids raise `KeyError` naming the unit and the store; a write to a deleted unit raises
  `ValueError`. One store is used by one thread at a time; a lock guards it anyway.

>>> with MemoryStore() as store:
...     unit = store.add("Caroline adopted a puppy named Max.", speaker="Caroline")
...     store.search("puppy")[0][0].ref
'memory:m1@1'
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import numpy as np
import Stemmer
from bm25s import BM25
from bm25s.tokenization import Tokenized, Tokenizer

from memopt.core.errors import DataError
from memopt.systems.events import StoreEvent, current_op, emit, listening

__all__ = ["MemoryUnit", "MemoryStore"]

Action = Literal["ADD", "UPDATE", "DELETE"]

_COLUMNS = ("unit_id", "version", "text", "speaker", "session_date", "source", "op_id", "seq", "ts",
            "deleted", "action", "metadata")
_SELECT = f"SELECT {', '.join(_COLUMNS)} FROM memory_units"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS memory_units (
    unit_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    text TEXT NOT NULL,
    speaker TEXT,
    session_date TEXT,
    source TEXT NOT NULL,
    op_id TEXT,
    seq INTEGER NOT NULL UNIQUE,
    ts REAL NOT NULL,
    deleted INTEGER NOT NULL CHECK (deleted IN (0, 1)),
    action TEXT NOT NULL CHECK (action IN ('ADD', 'UPDATE', 'DELETE')),
    metadata TEXT NOT NULL,
    PRIMARY KEY (unit_id, version)
);
CREATE TRIGGER IF NOT EXISTS memory_units_no_update BEFORE UPDATE ON memory_units
BEGIN SELECT RAISE(ABORT, 'memory unit versions are append-only'); END;
CREATE TRIGGER IF NOT EXISTS memory_units_no_delete BEFORE DELETE ON memory_units
BEGIN SELECT RAISE(ABORT, 'memory unit versions are append-only'); END;
"""
_LIVE = f"""
WITH latest AS (
    SELECT unit_id, MAX(version) AS version, MIN(seq) AS created FROM memory_units
    WHERE seq <= ? GROUP BY unit_id
)
SELECT {', '.join('m.' + c for c in _COLUMNS)} FROM memory_units AS m
JOIN latest ON m.unit_id = latest.unit_id AND m.version = latest.version
WHERE m.deleted = 0 ORDER BY latest.created
"""
_INDEX_CACHE_SIZE = 16
_STEMMER = Stemmer.Stemmer("porter")


@dataclass(frozen=True)
class MemoryUnit:
    """One version of a memory unit, as stored."""

    unit_id: str
    version: int
    text: str
    speaker: str | None
    session_date: str | None
    source: tuple[str, ...]
    op_id: str | None
    seq: int
    ts: float
    deleted: bool
    action: Action
    metadata: dict[str, Any] = field(default_factory=dict)
    kind: str = "memory"

    @property
    def ref(self) -> str:
        """The variable name of this version in an evolution graph: ``<store name>:<unit id>@<version>``."""
        return f"{self.kind}:{self.unit_id}@{self.version}"


def _unit(row: tuple[Any, ...], kind: str) -> MemoryUnit:
    unit_id, version, text, speaker, session_date, source, op_id, seq, ts, deleted, action, metadata = row
    return MemoryUnit(unit_id, version, text, speaker, session_date, tuple(json.loads(source)), op_id, seq, ts,
                      bool(deleted), action, json.loads(metadata), kind)


def _row(unit: MemoryUnit) -> tuple[Any, ...]:
    return (unit.unit_id, unit.version, unit.text, unit.speaker, unit.session_date, json.dumps(list(unit.source)),
            unit.op_id, unit.seq, unit.ts, int(unit.deleted), unit.action,
            json.dumps(unit.metadata, ensure_ascii=False, sort_keys=True))


def _check_text(text: object) -> str:
    if not isinstance(text, str):
        raise TypeError(f"memory text must be a str, got {type(text).__name__}")
    return text


def _sources(source: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(str(s) for s in source))


def _as_stored(metadata: dict[str, Any], unit_id: str) -> dict[str, Any]:
    try:
        return json.loads(json.dumps(metadata, ensure_ascii=False))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"metadata of memory unit {unit_id} must be JSON-serialisable: {exc}") from exc


class _Index:
    """A BM25 index over one view of the store (its live units, in creation order)."""

    def __init__(self, units: list[MemoryUnit], docs: list[list[int]], vocab: dict[str, int]) -> None:
        self.units = units
        self.n_vocab = len(vocab)
        self.retriever = BM25()
        if units:
            self.retriever.index(Tokenized(ids=docs, vocab=dict(vocab)), show_progress=False)

    def top(self, query: list[int], k: int) -> list[tuple[MemoryUnit, float]]:
        """The ``k`` best units with a positive score, best first, ties in creation order."""
        known = [i for i in query if i < self.n_vocab]
        if not self.units or not known:
            return []
        scores = self.retriever.get_scores_from_ids(known)
        hits = np.flatnonzero(scores > 0)
        best = hits[np.argsort(-scores[hits], kind="stable")][:k]
        return [(self.units[i], float(scores[i])) for i in best]


class _Corpus:
    """Tokenizes each unit version once (bm25s tokenizer, English stopwords, Porter stems)."""

    def __init__(self) -> None:
        self.tokenizer = Tokenizer(stopwords="en", stemmer=_STEMMER)
        self.docs: dict[tuple[str, int], list[int]] = {}

    def index(self, units: list[MemoryUnit]) -> _Index:
        """A BM25 index over ``units``, tokenizing only the versions not seen before."""
        new = [u for u in units if (u.unit_id, u.version) not in self.docs]
        if new:
            ids = self.tokenizer.tokenize([u.text for u in new], update_vocab=True, return_as="ids",
                                          show_progress=False)
            self.docs.update(zip(((u.unit_id, u.version) for u in new), ids, strict=True))
        docs = [self.docs[u.unit_id, u.version] for u in units]
        return _Index(units, docs, self.tokenizer.get_vocab_dict())

    def query(self, text: str) -> list[int]:
        """The token ids of a query (its words unknown to every indexed text are dropped)."""
        return self.tokenizer.tokenize([text], update_vocab=False, return_as="ids", show_progress=False,
                                       allow_empty=False)[0]


class MemoryStore:
    """An append-only, versioned store of memory units in SQLite, with BM25 search over any past view."""

    def __init__(self, path: str | Path = ":memory:", *, name: str = "memory", id_prefix: str = "m") -> None:
        self.path = str(path)
        self.name = name
        self.id_prefix = id_prefix
        self._lock = threading.RLock()
        self._corpus = _Corpus()
        self._indexes: OrderedDict[int, _Index] = OrderedDict()
        try:
            self._conn = sqlite3.connect(self.path, check_same_thread=False)
            self._conn.executescript(_SCHEMA)
            seq, count = self._conn.execute(
                "SELECT COALESCE(MAX(seq), 0), COUNT(DISTINCT unit_id) FROM memory_units").fetchone()
        except sqlite3.Error as exc:
            raise DataError(f"cannot open memory store {self.name!r} at {self.path}: {exc}; "
                            "pass a writable path to an SQLite file or ':memory:'") from exc
        self._seq: int = seq
        self._created: int = count
        self._current = {u.unit_id: u for u in self._query_live(seq)}

    # --- writes ------------------------------------------------------------------------------

    def add(self, text: str, *, speaker: str | None = None, session_date: str | None = None,
            source: Iterable[str] = (), metadata: dict[str, Any] | None = None,
            op_id: str | None = None) -> MemoryUnit:
        """Create a new unit (version 1) and return it."""
        with self._lock:
            unit_id = f"{self.id_prefix}{self._created + 1}"
            unit = self._write(MemoryUnit(unit_id, 1, _check_text(text), speaker, session_date, _sources(source),
                                          op_id, 0, 0.0, False, "ADD", metadata or {}, self.name))
            self._created += 1
        self._emit_write(unit)
        return unit

    def update(self, unit_id: str, text: str, *, source: Iterable[str] | None = None,
               session_date: str | None = None, metadata: dict[str, Any] | None = None,
               op_id: str | None = None) -> MemoryUnit:
        """Write a new version with ``text``; other fields carry over unless given, ``source`` is merged in."""
        with self._lock:
            old = self._writable(unit_id, "update")
            unit = self._write(replace(
                old, version=old.version + 1, text=_check_text(text), op_id=op_id, action="UPDATE",
                source=old.source if source is None else _sources((*old.source, *source)),
                session_date=old.session_date if session_date is None else session_date,
                metadata=old.metadata if metadata is None else metadata))
        self._emit_write(unit)
        return unit

    def delete(self, unit_id: str, *, op_id: str | None = None) -> MemoryUnit:
        """Write a deleted version of the unit (its text is kept) and return it."""
        with self._lock:
            old = self._writable(unit_id, "delete")
            unit = self._write(replace(old, version=old.version + 1, op_id=op_id, deleted=True, action="DELETE"))
        self._emit_write(unit)
        return unit

    def _writable(self, unit_id: str, verb: str) -> MemoryUnit:
        old = self._latest(unit_id)
        if old.deleted:
            raise ValueError(f"cannot {verb} memory unit {unit_id} in store {self.name!r}: it was deleted at "
                             f"seq {old.seq} (version {old.version}); add a new unit instead")
        return old

    def _write(self, draft: MemoryUnit) -> MemoryUnit:
        """Stamp a draft version (op, seq, time, stored metadata), insert it and update the live view."""
        unit = replace(draft, op_id=draft.op_id if draft.op_id is not None else current_op(), seq=self._seq + 1,
                       ts=time.time(), metadata=_as_stored(draft.metadata, draft.unit_id))
        with self._conn:
            self._conn.execute(f"INSERT INTO memory_units ({', '.join(_COLUMNS)}) VALUES "
                               f"({', '.join('?' * len(_COLUMNS))})", _row(unit))
        self._seq = unit.seq
        if unit.deleted:
            del self._current[unit.unit_id]
        else:
            self._current[unit.unit_id] = unit
        return unit

    # --- reads -------------------------------------------------------------------------------

    @property
    def seq(self) -> int:
        """The logical clock: the seq of the last write (0 for an empty store)."""
        return self._seq

    def get(self, unit_id: str, version: int | None = None) -> MemoryUnit:
        """One version of a unit (the latest, deleted or not, when ``version`` is None)."""
        with self._lock:
            if version is None:
                unit = self._latest(unit_id)
            else:
                row = self._conn.execute(f"{_SELECT} WHERE unit_id = ? AND version = ?",
                                         (unit_id, version)).fetchone()
                if row is None:
                    latest = self._latest(unit_id)
                    raise KeyError(f"memory unit {unit_id} in store {self.name!r} has no version {version} "
                                   f"(versions 1..{latest.version})")
                unit = _unit(row, self.name)
        self._emit_read("GET", (unit,), version=version)
        return unit

    def history(self, unit_id: str) -> list[MemoryUnit]:
        """Every version of a unit, oldest first."""
        with self._lock:
            rows = self._conn.execute(f"{_SELECT} WHERE unit_id = ? ORDER BY version", (unit_id,)).fetchall()
        if not rows:
            raise self._unknown(unit_id)
        return [_unit(r, self.name) for r in rows]

    def units(self) -> list[str]:
        """The ids of all units ever created (deleted ones too), in creation order."""
        with self._lock:
            rows = self._conn.execute("SELECT unit_id FROM memory_units WHERE version = 1 ORDER BY seq").fetchall()
        return [r[0] for r in rows]

    def live(self, as_of: int | None = None) -> list[MemoryUnit]:
        """The latest non-deleted version of each unit as of seq ``as_of`` (now when None), in creation order."""
        with self._lock:
            units = self._live(self._view(as_of))
        self._emit_read("LIVE", units, as_of=as_of)
        return units

    def search(self, query: str, k: int = 5, *, as_of: int | None = None) -> list[tuple[MemoryUnit, float]]:
        """The ``k`` live units (as of ``as_of``) that best match ``query`` under BM25, with their scores."""
        if k < 1:
            raise ValueError(f"k must be at least 1 to search store {self.name!r}, got {k}")
        with self._lock:
            hits = self._index(self._view(as_of)).top(self._corpus.query(query), k)
        self._emit_read("SEARCH", [u for u, _ in hits], query=query, k=k, as_of=as_of,
                        scores=tuple(s for _, s in hits))
        return hits

    def _view(self, as_of: int | None) -> int:
        return self._seq if as_of is None else min(as_of, self._seq)

    def _live(self, view: int) -> list[MemoryUnit]:
        return list(self._current.values()) if view == self._seq else self._query_live(view)

    def _query_live(self, view: int) -> list[MemoryUnit]:
        return [_unit(r, self.name) for r in self._conn.execute(_LIVE, (view,)).fetchall()]

    def _index(self, view: int) -> _Index:
        index = self._indexes.get(view)
        if index is None:
            index = self._indexes[view] = self._corpus.index(self._live(view))
            while len(self._indexes) > _INDEX_CACHE_SIZE:
                self._indexes.popitem(last=False)
        else:
            self._indexes.move_to_end(view)
        return index

    def _latest(self, unit_id: str) -> MemoryUnit:
        row = self._conn.execute(f"{_SELECT} WHERE unit_id = ? ORDER BY version DESC LIMIT 1", (unit_id,)).fetchone()
        if row is None:
            raise self._unknown(unit_id)
        return _unit(row, self.name)

    def _unknown(self, unit_id: str) -> KeyError:
        return KeyError(f"no memory unit {unit_id!r} in store {self.name!r} (it holds {self._created} units)")

    # --- events ------------------------------------------------------------------------------

    def _emit_write(self, unit: MemoryUnit) -> None:
        if listening():
            emit(StoreEvent(kind="store", action=unit.action, store=self.name, seq=unit.seq, op_id=unit.op_id,
                            unit_id=unit.unit_id, version=unit.version, text=unit.text,
                            metadata={"speaker": unit.speaker, "session_date": unit.session_date,
                                      "source": unit.source, "metadata": dict(unit.metadata)}))

    def _emit_read(self, action: Literal["SEARCH", "GET", "LIVE"], units: Sequence[MemoryUnit], *,
                   query: str | None = None, **details: Any) -> None:
        if listening():
            emit(StoreEvent(kind="store", action=action, store=self.name, seq=self._seq, op_id=current_op(),
                            query=query, results=tuple((u.unit_id, u.version) for u in units), metadata=details))

    # --- lifetime ----------------------------------------------------------------------------

    def close(self) -> None:
        """Close the SQLite connection (idempotent)."""
        with self._lock:
            self._conn.close()
            self._indexes.clear()

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
