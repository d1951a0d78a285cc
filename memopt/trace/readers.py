"""Trace directories of any source: the registry of trace readers (``@trace_reader``) and `open_trace`.

A trace reader recognises the files of one source and reads each into evolution graphs, named (one file may
hold several: a recording holds one graph per user id). memopt ships three:

- ``memopt``: its own graph files (``memopt run --trace``, ``memopt attach``; ``*.json`` / ``*.json.gz`` with
  ``"schema": "memopt.evolution_graph"``);
- ``smartcomment``: smartcomment / MemTraceBench execution graphs, with or without annotations (MemBase's
  way of tracing a system; `memopt.trace.memtracebench`);
- ``mem0_recording``: a tapped Mem0's ``records.jsonl`` (`memopt.live.records`), read into graphs by
  `memopt.live.graph.build_graphs` without Mem0.

The readers memopt ships are registered by ``memopt.live.readers`` (found by name, as the LM provider ``sim``
is, so this floor imports nothing above it). A package registers a reader of its own with the decorator, or
through an entry point in the ``memopt.trace_readers`` group (the rules of `memopt.registry`).

`open_trace` reads a directory: each file by the first reader that recognises it (in the registry's order);
files no reader recognises are left alone. A directory ``memopt attach`` wrote holds both the recording and the
graphs built from it: the graphs are read once (the recording is skipped when graph files built from it sit
beside it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import networkx as nx

from memopt.core.errors import DataError
from memopt.registry import Registry, entry_adopter

__all__ = ["TraceReader", "TracedGraph", "trace_reader", "trace_readers", "open_trace", "GROUP"]

GROUP = "memopt.trace_readers"
Recognise = Callable[[Path], bool]
Read = Callable[[Path], dict[str, nx.DiGraph]]


@dataclass(frozen=True)
class TraceReader:
    """A registered trace reader: its name, what it recognises, how it reads a file (name → graph)."""

    name: str
    read: Read
    recognises: Recognise
    describes: str = ""

    def __call__(self, path: Path) -> dict[str, nx.DiGraph]:
        """The graphs of one file, by name."""
        return self.read(path)


_adopt = entry_adopter("trace reader", TraceReader, "a TraceReader (use @trace_reader)")


trace_readers: Registry[TraceReader] = Registry("trace reader", GROUP, "memopt.live.readers", _adopt)


def trace_reader(name: str, *, recognises: Recognise, describes: str = "") -> Callable[[Read], TraceReader]:
    """Decorator: register a function of (file path) → {name: graph} as the trace reader ``name``, used for the
    files ``recognises`` says yes to."""

    def register(fn: Read) -> TraceReader:
        module = getattr(fn, "__module__", None) or "?"
        return trace_readers.register(name, TraceReader(name, fn, recognises, describes), module=module)

    return register


@dataclass(frozen=True)
class TracedGraph:
    """One graph of a trace directory: the file it came from, its name there, the reader, the graph."""

    path: Path
    name: str
    reader: str
    graph: nx.DiGraph


def open_trace(directory: str | Path) -> list[TracedGraph]:
    """Every graph of a trace directory, file by file in name order (see the module docstring)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise DataError(f"{directory}: no such trace directory (graphs written by `memopt run --trace`, "
                        "`memopt attach`, a Mem0 recording, or smartcomment / MemTraceBench graphs).")
    readers = [trace_readers.get(name) for name in trace_readers.names()]
    out: list[TracedGraph] = []
    recordings: list[tuple[Path, TraceReader]] = []
    for path in sorted(p for p in directory.iterdir() if p.is_file()):
        reader = next((r for r in readers if r.recognises(path)), None)
        if reader is None:
            continue
        if reader.name == "mem0_recording":
            recordings.append((path, reader))
            continue
        out += [TracedGraph(path, name, reader.name, G) for name, G in reader(path).items()]
    built_from = {str((g.graph.graph.get("source") or {}).get("recording")) for g in out}
    for path, reader in recordings:
        if path.name not in built_from:
            out += [TracedGraph(path, name, reader.name, G) for name, G in reader(path).items()]
    if not out:
        known = "; ".join(f"{r.name}: {r.describes}" for r in readers)
        raise DataError(f"{directory}: no trace files in it (known: {known}).")
    return out
