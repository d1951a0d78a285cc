"""Attach memopt to a real Mem0: tap a user's ``Memory`` object, record what it does, build evolution graphs.

`trace_mem0` wraps a ``mem0.Memory`` instance (no patch to Mem0) and writes a versioned JSONL recording
(`memopt.live.records`); `build_graphs` turns a recording into memopt's evolution graphs, one per user id,
which `memopt attribute` and `memopt show` read; `attach_mem0` runs a whole LoCoMo-format data set through
the user's Mem0 under the tap (`memopt attach mem0`). Imports are lazy: ``import memopt.live`` does not
import Mem0.
"""

from __future__ import annotations

from typing import Any

__all__ = ["trace_mem0", "build_graphs", "read_records", "attach_mem0", "Mem0Tap"]


def __getattr__(name: str) -> Any:
    if name in ("trace_mem0", "Mem0Tap"):
        from memopt.live import tap

        return getattr(tap, name)
    if name == "build_graphs":
        from memopt.live.graph import build_graphs

        return build_graphs
    if name == "read_records":
        from memopt.live.records import read_records

        return read_records
    if name == "attach_mem0":
        from memopt.live.attach import attach_mem0

        return attach_mem0
    raise AttributeError(f"module 'memopt.live' has no attribute {name!r}")
