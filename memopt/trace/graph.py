"""The executable memory evolution graph: its schema, and the queries every later stage uses.

One graph per conversation: a `networkx.DiGraph`, bipartite, directed, time-ordered.

**Graph attributes** (``G.graph``): ``schema_version``; ``pipeline``; ``operations`` (op name →
its system's declaration: ``kind``, ``phase``, ``stages``, ``steered_by``, ``description``, see
`memopt.systems.base.OpSpec`); ``conversation`` (sample id),
``speakers`` and ``sessions`` (``[{index, date_time}]``), so the conversation can be rebuilt from
the graph; ``knobs``; ``instructions`` (op → instruction text) and ``prompt_versions`` (op →
hash); ``lm`` (task LM spec) and ``simulated``; ``cases`` (``[{case_id, key, question, gold,
evidence, category}]`` of the questions asked in the run).

**Variable nodes** (``type="variable"``), id ``kind:ident@version`` (``turn:D4:12@1``,
``fact:conv-30:S3.2@1``, ``memory:m17@3``, ``context:conv-30:q12@1``, ``answer:conv-30:q12@1``,
``prompt:mem0.extract@1``): ``kind``, ``name`` (``kind:ident``), ``version`` (1, 2, … in time
order), ``value``, ``created`` (logical time), ``derived_from`` (refs), and for store units
``action`` (ADD / UPDATE / DELETE), ``deleted``, ``sources`` (dia_ids), ``session_date``.

**Operation nodes** (``type="op"``), id ``<op>:<sample_id>:<key>`` (``extract:conv-30:S3``):
``operation``, ``pipeline``, ``op_kind`` (llm / tool), ``predictor``, ``prompt_version``,
``inputs``, ``inputs_hash``, ``output``, ``start`` / ``end`` (logical time), ``started_at``,
``seconds``, ``lm_calls``, ``input_tokens``, ``output_tokens``, ``error``, ``overridden``,
``searched`` (it searched or listed a store, so it saw every unit live then).

**Edges**: variable → op (``rel="read"``) and op → variable (``rel="write"``). Provenance runs
through ops: a fact's turns are read by the extract op that wrote it; a memory version's previous
version is read by the op that wrote the new one; a context is written by the op that read the
memory versions it holds; an answer by the op that read that context.

The queries below are free functions over such a graph. Attribution reads an op's stages and
steering from the declarations the graph recorded (`op_stages`, `steering_ops`), never from its name.
"""

from __future__ import annotations

import re
import weakref

import networkx as nx

from memopt.taxonomy import STAGES

__all__ = [
    "SCHEMA_VERSION",
    "split_ref",
    "variables",
    "ops",
    "ops_in_order",
    "lineage",
    "derived_from_turn",
    "memory_as_of",
    "op_subgraph",
    "answer_of",
    "latest",
    "versions_of",
    "validate",
    "op_stages",
    "steering_ops",
]

SCHEMA_VERSION = 2
_INDEX: weakref.WeakKeyDictionary[nx.DiGraph, tuple[int, dict[str, list[str]]]] = weakref.WeakKeyDictionary()
_REF = re.compile(r"^(?P<name>(?P<kind>[a-z_]+):.+?)(?:@(?P<version>\d+))?$")


def split_ref(ref: str) -> tuple[str, str, int | None]:
    """``"memory:m17@3"`` → ``("memory", "memory:m17", 3)``; the version is None when absent."""
    m = _REF.match(ref)
    if not m:
        raise ValueError(f"not a variable reference: {ref!r} (expected kind:id or kind:id@version)")
    return m.group("kind"), m.group("name"), int(m.group("version")) if m.group("version") else None


def variables(G: nx.DiGraph, kind: str | None = None) -> list[str]:
    """Variable nodes (of one kind), in creation order."""
    found = [n for n, d in G.nodes(data=True) if d.get("type") == "variable" and (kind is None or d["kind"] == kind)]
    return sorted(found, key=lambda n: G.nodes[n]["created"])


def ops(G: nx.DiGraph, operation: str | None = None) -> list[str]:
    """Operation nodes (of one operation name), in start order."""
    return [n for n in ops_in_order(G) if operation is None or G.nodes[n]["operation"] == operation]


def ops_in_order(G: nx.DiGraph) -> list[str]:
    """Every operation node, in the order the operations started."""
    found = [n for n, d in G.nodes(data=True) if d.get("type") == "op"]
    return sorted(found, key=lambda n: G.nodes[n]["start"])


def _versions(G: nx.DiGraph) -> dict[str, list[str]]:
    """Variable name → its version nodes in version order (cached on the graph until it changes size)."""
    cached = _INDEX.get(G)
    if cached is not None and cached[0] == G.number_of_nodes():
        return cached[1]
    index: dict[str, list[str]] = {}
    for n, d in G.nodes(data=True):
        if d.get("type") == "variable":
            index.setdefault(d["name"], []).append(n)
    for nodes in index.values():
        nodes.sort(key=lambda n: G.nodes[n]["version"])
    _INDEX[G] = (G.number_of_nodes(), index)
    return index


def versions_of(G: nx.DiGraph, name: str) -> list[str]:
    """Every version node of a variable name, oldest first."""
    return list(_versions(G).get(name, ()))


def latest(G: nx.DiGraph, name: str) -> str | None:
    """The newest version node of a variable name (``memory:m17``), or None."""
    nodes = _versions(G).get(name)
    return nodes[-1] if nodes else None


def lineage(G: nx.DiGraph, node: str) -> nx.DiGraph:
    """Everything ``node`` was derived from (and the node itself), as a subgraph view."""
    return G.subgraph(nx.ancestors(G, node) | {node})


def derived_from_turn(G: nx.DiGraph, dia_id: str) -> set[str]:
    """Every node derived from the dialogue turn ``dia_id`` (all its versions)."""
    out: set[str] = set()
    for turn in (n for n in variables(G, "turn") if G.nodes[n]["name"] == f"turn:{dia_id}"):
        out |= nx.descendants(G, turn)
    return out


def memory_as_of(G: nx.DiGraph, op: str, kinds: frozenset[str] | None = None) -> list[str]:
    """The live store-unit versions (of the given kinds; memories, chunks, episodes, ...) when ``op`` started."""
    start = G.nodes[op]["start"]
    newest: dict[str, str] = {}
    for n in variables(G):
        d = G.nodes[n]
        if (kinds is None or d["kind"] in kinds) and d["created"] < start and "action" in d:
            newest[d["name"]] = n
    return [n for n in newest.values() if not G.nodes[n].get("deleted")]


def op_stages(G: nx.DiGraph, op: str) -> tuple[str, ...]:
    """The taxonomy stages an op node belongs to: its system's declaration (``G.graph["operations"]``), else
    (an op of an imported MemTrace graph) its ``category``; empty when neither says."""
    d = G.nodes[op]
    spec = (G.graph.get("operations") or {}).get(d["operation"])
    if spec is not None:
        return tuple(spec.get("stages") or ())
    category = d.get("category")
    return (category,) if category in STAGES else ()


def steering_ops(G: nx.DiGraph) -> frozenset[str]:
    """Names of the operations that steer another op of the system (named in its ``steered_by``)."""
    specs = G.graph.get("operations") or {}
    return frozenset(s for spec in specs.values() for s in spec.get("steered_by") or () if s in specs)


def op_subgraph(G: nx.DiGraph, op: str) -> nx.DiGraph:
    """An operation with the variables it read and wrote."""
    return G.subgraph({op, *G.predecessors(op), *G.successors(op)})


def answer_of(G: nx.DiGraph, case_key: str) -> str | None:
    """The newest answer variable of a question key (``q12``), or None."""
    conversation = G.graph.get("conversation", "")
    return latest(G, f"answer:{conversation}:{case_key}")


def validate(G: nx.DiGraph) -> list[str]:
    """Problems with a graph (empty when valid): bipartite, acyclic, versions increasing, answers grounded."""
    problems: list[str] = []
    for u, v, d in G.edges(data=True):
        tu, tv = G.nodes[u].get("type"), G.nodes[v].get("type")
        if {tu, tv} != {"variable", "op"}:
            problems.append(f"edge {u} -> {v} joins two {tu} nodes")
        elif d.get("rel") != ("read" if tu == "variable" else "write"):
            problems.append(f"edge {u} -> {v} has rel {d.get('rel')!r}")
    if not nx.is_directed_acyclic_graph(G):
        problems.append(f"graph has a cycle: {nx.find_cycle(G)}")
    by_name: dict[str, list[tuple[int, int]]] = {}
    for n in variables(G):
        d = G.nodes[n]
        by_name.setdefault(d["name"], []).append((d["created"], d["version"]))
    for name, seen in by_name.items():
        versions = [v for _, v in sorted(seen)]
        if versions != list(range(1, len(versions) + 1)):
            problems.append(f"{name}: versions {versions} do not increase 1, 2, … in time order")
    turns = set(variables(G, "turn"))
    for answer in variables(G, "answer"):
        if not (nx.ancestors(G, answer) & turns):
            problems.append(f"{answer} is not reachable back to any dialogue turn")
    return problems

