"""The trace readers memopt ships (`memopt.trace.readers`): its own graph files, smartcomment / MemTraceBench
graphs, and a tapped Mem0's recording. This module is the registry's builtins module, so a trace directory of
any of the three opens with `memopt.trace.readers.open_trace` (and ``memopt attribute TRACE_DIR``).
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import networkx as nx

from memopt.trace.readers import trace_reader

__all__ = ["read_memopt_graph", "read_smartcomment_graph", "read_recording"]

_HEAD = 4096


def _head(path: Path) -> str:
    """The first characters of a (possibly gzipped) text file, '' when unreadable."""
    try:
        if path.name.endswith(".gz"):
            with gzip.open(path, "rt", encoding="utf-8") as f:
                return f.read(_HEAD)
        with path.open(encoding="utf-8") as f:
            return f.read(_HEAD)
    except (OSError, UnicodeDecodeError, EOFError):
        return ""


def _is_memopt(path: Path) -> bool:
    from memopt.trace.io import SCHEMA

    return path.name.endswith((".json", ".json.gz")) and f'"{SCHEMA}"' in _head(path)


def _is_smartcomment(path: Path) -> bool:
    head = _head(path)
    return path.suffix == ".json" and '"graph_id"' in head and '"schema"' not in head[:200]


def _is_recording(path: Path) -> bool:
    from memopt.live.records import SCHEMA

    first = _head(path).split("\n", 1)[0]
    return path.suffix == ".jsonl" and re.search(rf'"schema"\s*:\s*"{re.escape(SCHEMA)}"', first) is not None


@trace_reader("memopt", recognises=_is_memopt, describes="memopt graph files (*.json from memopt run --trace)")
def read_memopt_graph(path: Path) -> dict[str, nx.DiGraph]:
    """One memopt graph file, named by its conversation."""
    from memopt.trace.io import load_graph

    G = load_graph(path)
    return {str(G.graph.get("conversation") or path.stem): G}


@trace_reader("smartcomment", recognises=_is_smartcomment,
              describes="smartcomment / MemTraceBench graphs (*.json with graph_id and data)")
def read_smartcomment_graph(path: Path) -> dict[str, nx.DiGraph]:
    """One smartcomment graph, named by its file (its annotations, if any, stay in the file)."""
    from memopt.trace.memtracebench import load_memtrace

    G, _ = load_memtrace(path)
    return {path.name: G}


@trace_reader("mem0_recording", recognises=_is_recording,
              describes="a tapped Mem0's records.jsonl (memopt.live.trace_mem0, memopt attach)")
def read_recording(path: Path) -> dict[str, nx.DiGraph]:
    """A Mem0 recording: one graph per user id (no Mem0 needed)."""
    from memopt.live.graph import build_graphs
    from memopt.live.records import read_records

    header, records = read_records(path)
    return build_graphs(header, records, source=path.name)
