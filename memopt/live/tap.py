"""`trace_mem0`: record what a user's own Mem0 ``Memory`` does, without patching Mem0.

The tap replaces, on the instance only, ``memory.add`` and ``memory.search`` (the public calls),
``memory.llm.generate_response``, ``memory.embedding_model.embed`` (and ``embed_batch``) and the vector
store's ``search``, ``keyword_search`` (2.x), ``insert``, ``update``, ``delete`` and ``get``; after each
``add`` it reads the rows Mem0 wrote to its SQLite ``history`` table (by rowid). Everything goes to a
JSONL recording (`memopt.live.records`).
Leaving the block puts the original attributes back.

``add()`` runs its work in a ``ThreadPoolExecutor``, so context variables set by the caller do not
reach the LLM and store calls. The tap therefore serialises the public calls on the tapped instance
(one ``add`` or ``search`` at a time, whatever thread calls it) and files every component call under
the one public call in flight. A component call outside any public call is recorded with ``call``
null. Which Mem0 majors are understood is the decoders' business (`memopt.live.decode`): an unknown
major is refused before anything is wrapped.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from memopt.live.decode import PROMPT_KEYS, decoder_for
from memopt.live.records import RecordWriter

__all__ = ["Mem0Tap", "trace_mem0"]

_VECTOR_METHODS = ("search", "keyword_search", "insert", "update", "delete", "get")
_HISTORY_COLUMNS = ("memory_id", "old_memory", "new_memory", "event", "created_at")


class Mem0Tap:
    """A recording tap on one ``mem0.Memory`` instance (use `trace_mem0`)."""

    def __init__(self, memory: Any, out: str | Path, *, version: str | None = None, lm: str | None = None,
                 simulated: bool = False) -> None:
        self.memory = memory
        self.version = version or importlib.metadata.version("mem0ai")
        self.decoder = decoder_for(self.version)
        config = getattr(memory, "config", None)
        prompts = {key: getattr(config, key, None) for key in PROMPT_KEYS[self.decoder.major]}
        self.writer = RecordWriter(out, {"mem0_version": self.version, "major": self.decoder.major,
                                         "prompts": prompts, "lm": lm, "simulated": simulated,
                                         "started_at": time.time()})
        self._serial = threading.RLock()
        self._active: int | None = None
        self._calls = 0
        self._last_search: int | None = None
        self._saved: list[tuple[Any, str, bool, Any]] = []
        self._last_rowid = self._max_rowid()

    # --- wrapping ----------------------------------------------------------------------------------
    def _wrap(self, owner: Any, name: str, make: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
        own = name in vars(owner)
        original = getattr(owner, name)
        self._saved.append((owner, name, own, vars(owner).get(name)))
        setattr(owner, name, functools.wraps(original)(make(original)))

    def install(self) -> None:
        """Wrap the instance's public calls and components."""
        m = self.memory
        self._wrap(m, "add", self._public("add"))
        self._wrap(m, "search", self._public("search"))
        self._wrap(m.llm, "generate_response", self._llm)
        self._wrap(m.embedding_model, "embed", self._embed)
        if hasattr(m.embedding_model, "embed_batch"):
            self._wrap(m.embedding_model, "embed_batch", self._embed)
        for name in _VECTOR_METHODS:
            if hasattr(m.vector_store, name):
                self._wrap(m.vector_store, name, functools.partial(self._vector, name))

    def uninstall(self) -> None:
        """Put every wrapped attribute back as it was."""
        for owner, name, own, value in reversed(self._saved):
            if own:
                setattr(owner, name, value)
            else:
                with contextlib.suppress(AttributeError):
                    delattr(owner, name)
        self._saved.clear()

    def close(self) -> None:
        """Unwrap and close the recording."""
        self.uninstall()
        self.writer.close()

    # --- the public calls ----------------------------------------------------------------------------
    def _public(self, kind: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def make(original: Callable[..., Any]) -> Callable[..., Any]:
            def call(*args: Any, **kwargs: Any) -> Any:
                with self._serial:
                    self._calls += 1
                    number, outer = self._calls, self._active
                    self._active = number
                    if kind == "search":
                        self._last_search = number
                    self.writer.write(kind, number, phase="start", at=_now(),
                                      **self.decoder.call_fields(kind, args, kwargs))
                    try:
                        result = original(*args, **kwargs)
                    except Exception as e:
                        self._stop_if_failed()  # a record Mem0's own threads could not write: that is the error
                        self.writer.write(kind, number, phase="end", error=f"{type(e).__name__}: {e}")
                        raise
                    finally:
                        try:
                            if kind == "add":
                                self._read_history(number)
                        finally:
                            self._active = outer
                    self._stop_if_failed()  # Mem0 may have swallowed the failure of a write made in its threads
                    self.writer.write(kind, number, phase="end", results=_results(result))
                    return result
            return call
        return make

    def _stop_if_failed(self) -> None:
        """Raise the failure of any write of the recording so far (`memopt.live.records.RecordWriter.failure`)."""
        if self.writer.failure is not None:
            raise self.writer.failure from None

    def _llm(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def generate_response(*args: Any, **kwargs: Any) -> Any:
            messages = kwargs.get("messages", args[0] if args else None)
            try:
                response = original(*args, **kwargs)
            except Exception as e:
                self.writer.write("llm", self._active, messages=messages, response=None,
                                  error=f"{type(e).__name__}: {e}")
                raise
            self.writer.write("llm", self._active, messages=messages,
                              response=response if isinstance(response, str) else str(response), error=None)
            return response
        return generate_response

    def _embed(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def embed(text: Any, memory_action: Any = None, *args: Any, **kwargs: Any) -> Any:
            self.writer.write("embed", self._active, text=text, action=memory_action)
            return original(text, memory_action, *args, **kwargs)
        return embed

    def _vector(self, name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        def method(*args: Any, **kwargs: Any) -> Any:
            result = original(*args, **kwargs)
            self.writer.write(f"vs.{name}", self._active, **self.decoder.vector_fields(name, args, kwargs, result))
            return result
        return method

    # --- history ------------------------------------------------------------------------------------
    def _history(self, sql: str, params: tuple = ()) -> list[tuple]:
        db = getattr(self.memory, "db", None)
        connection = getattr(db, "connection", None)
        if connection is None:
            return []
        lock = getattr(db, "_lock", None) or contextlib.nullcontext()
        with lock:
            return connection.execute(sql, params).fetchall()

    def _max_rowid(self) -> int:
        rows = self._history("SELECT COALESCE(MAX(rowid), 0) FROM history")
        return int(rows[0][0]) if rows else 0

    def _read_history(self, call: int) -> None:
        rows = self._history(f"SELECT rowid, {', '.join(_HISTORY_COLUMNS)} FROM history WHERE rowid > ? "
                             "ORDER BY rowid", (self._last_rowid,))
        if rows:
            self._last_rowid = int(rows[-1][0])
            self.writer.write("history", call, rows=[{"rowid": r[0], **dict(zip(_HISTORY_COLUMNS, r[1:], strict=True))}
                                                     for r in rows])

    # --- annotations by the caller --------------------------------------------------------------------
    def session(self, user_id: str, *, index: int | None = None, date_time: str | None = None,
                dia_ids: list[str] | None = None, speakers: list[str] | None = None) -> None:
        """Note which session of which conversation the next ``add`` ingests (dialogue ids per message)."""
        self.writer.write("session", None, user_id=user_id, index=index, date_time=date_time,
                          dia_ids=list(dia_ids or []), speakers=list(speakers or []))

    @property
    def last_search(self) -> int | None:
        """The id of the latest public ``Memory.search`` call recorded (what an answer read)."""
        return self._last_search

    def answer(self, question: str, answer: str, *, user_id: str, case_id: str | None = None,
               search_call: int | None = None, gold: str | None = None, evidence: list[str] | None = None,
               category: int | None = None, context: str | None = None, prompt: str | None = None,
               date: str | None = None) -> None:
        """Record the application's answer to a question (read from the latest ``search`` unless told; ``date``:
        the day it was asked, when not today). Gold and evidence are optional: production has neither."""
        self.writer.write("case", None, user_id=user_id, case_id=case_id, question=question, answer=answer,
                          search_call=search_call if search_call is not None else self._last_search, gold=gold,
                          evidence=list(evidence or []), category=category, context=context,
                          prompt=prompt, date=date, at=_now())


def _now() -> str:
    """The wall-clock time a call was made, ISO 8601 (the day a production recording's items were said)."""
    return time.strftime("%Y-%m-%dT%H:%M:%S")


def _results(result: Any) -> Any:
    return result.get("results", result) if isinstance(result, dict) else result


@contextlib.contextmanager
def trace_mem0(memory: Any, out: str | Path, *, version: str | None = None, lm: str | None = None,
               simulated: bool = False) -> Iterator[Mem0Tap]:
    """Record everything ``memory`` does inside the block into the JSONL file ``out`` (see the module doc);
    ``lm`` and ``simulated`` describe Mem0's LLM in the recording's header."""
    tap = Mem0Tap(memory, out, version=version, lm=lm, simulated=simulated)
    tap.install()
    try:
        yield tap
    finally:
        tap.close()
