"""Executable memory evolution graphs: tracing, graph queries, serialisation, replay."""

from memopt.trace.graph import (
    SCHEMA_VERSION,
    answer_of,
    derived_from_turn,
    latest,
    lineage,
    memory_as_of,
    op_subgraph,
    ops,
    ops_in_order,
    split_ref,
    validate,
    variables,
)
from memopt.trace.io import export_graphml, graph_from_json, graph_to_json, load_graph, save_graph
from memopt.trace.memtracebench import from_memtrace, load_memtrace
from memopt.trace.replay import ReplayResult, conversation_of, downstream_ops, questions_of, replay
from memopt.trace.smartcomment import save_memtrace, to_memtrace
from memopt.trace.tracer import Tracer, trace

__all__ = [
    "SCHEMA_VERSION",
    "ReplayResult",
    "Tracer",
    "answer_of",
    "conversation_of",
    "derived_from_turn",
    "downstream_ops",
    "export_graphml",
    "from_memtrace",
    "load_memtrace",
    "save_memtrace",
    "to_memtrace",
    "graph_from_json",
    "graph_to_json",
    "latest",
    "lineage",
    "load_graph",
    "memory_as_of",
    "op_subgraph",
    "ops",
    "ops_in_order",
    "questions_of",
    "replay",
    "save_graph",
    "split_ref",
    "trace",
    "validate",
    "variables",
]
