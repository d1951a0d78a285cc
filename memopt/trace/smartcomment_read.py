"""The conversion of a validated smartcomment graph into a memopt evolution graph (`convert`).

`memopt.trace.memtracebench` documents the mapping (kinds, operations, multi-hop ops, reads and deletes);
this module implements it. Helpers are private; `convert` is the one entry point.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

import networkx as nx

from memopt.core.errors import DataError
from memopt.trace.chain_roles import chain_roles
from memopt.trace.conversation_roles import SAID_KEYS, WHO_KEYS, conversation_roles, message_object
from memopt.trace.dates import date_of, read_day
from memopt.trace.graph import SCHEMA_VERSION
from memopt.trace.question_ops import serving_ops
from memopt.trace.references import name_references
from memopt.trace.roles import base_kind, decode_value, gold_text, judged_roles, slug
from memopt.trace.store_units import store_unit_names
from memopt.trace.tombstones import evicted_turns, is_emptied, is_tombstone, unit_named
from memopt.trace.tracer import inputs_hash
from memopt.trace.turn_refs import turn_refs
from memopt.trace.verdicts import verdicts

__all__ = ["convert", "date_of", "decode_value"]

_SENTINEL = "COMMENT:NONE@1"
_SUFFIX = "\nBelow is this message's metadata:"
_SPEAKER = re.compile(r"^[*_]{0,2}([A-Z][\w'.-]*(?:\s[A-Z][\w'.-]*){0,2})[*_]{0,2}:[*_]{0,2}\s+(.*)$", re.S)
_PER_OP = frozenset({"answer", "context"})
_INGEST = frozenset({"extraction", "update", "deletion", "delete"})
_OPERATION = {"extraction": "extract", "update": "update", "deletion": "delete", "delete": "delete",
              "evaluation": "judge", "response": "answer"}


_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]*")
_STAGE_OF_CATEGORY = {"extraction": "extraction", "update": "update", "deletion": "deletion", "delete": "deletion",
                      "retrieval": "retrieval", "response": "response"}


def _stage(operation: str, category: Any) -> str | None:
    """The taxonomy stage of a converted op (its ``category`` attribute, read by `op_stages`): answers respond,
    fusing and searching retrieve, the rest by their smartcomment category (None for judges and links)."""
    if operation == "answer":
        return "response"
    if operation in ("fuse", "retrieve", "search_similar"):
        return "retrieval"
    category = str(category or "").lower()
    if category in _STAGE_OF_CATEGORY:
        return _STAGE_OF_CATEGORY[category]
    for stem, stage in (("extract", "extraction"), ("boundary", "extraction"), ("segment", "extraction"),
                        ("delet", "deletion"), ("retriev", "retrieval"), ("rerank", "retrieval"),
                        ("search", "retrieval"), ("update", "update")):
        if stem in category:
            return stage
    return None


_MEMBASE_TURN = re.compile(r"^Speaker (?P<name>.+?) \(role: (?P<role>[^)]*)\) says: (?P<text>.*?)"
                           r"(?:\n+Timestamp: (?P<stamp>[^\n]*))?\s*$", re.S)
_LAYERS = {"naiverag": "rag", "rag": "rag", "longcontext": "long_context", "evermemos": "evermemos", "mem0": "mem0"}


def _speaker_of(meta: dict[str, Any]) -> str | None:
    """The speaker a message's metadata names (``speaker``, ``speaker_name``, ``name``, MemBase's ``speakers``)."""
    for key in ("speaker", "speaker_name", "name", "speakers"):
        found = meta.get(key)
        if isinstance(found, list) and len(found) == 1:
            found = found[0]
        if isinstance(found, str) and found.strip():
            return found.strip()
    return None


_WHEN_KEYS = ("timestamp", "at", "time", "sent_at", "created_at", "datetime")


def _first(value: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    """The first non-empty text of a message's value under one of ``keys``."""
    return next((v for k in keys if isinstance(v := value.get(k), str) and v.strip()), None)


def _turn_value(node: dict[str, Any], session: int) -> dict[str, Any]:
    """A message as ``{speaker, text, session}`` (+ its ``timestamp``, moved to its metadata): the speaker by name
    from whichever field holds it (the value's ``name`` / ``speaker`` / ``who`` / ..., MemBase's ``Speaker X
    (role: r) says:`` text, the metadata), roles last; the text under ``content`` / ``text`` / ``said`` / ...,
    else the value's longest text."""
    value, meta = decode_value(node["value"]), node.get("metadata") or {}
    named, stamp = None, meta.get("timestamp")
    value, role = message_object(value)  # a LangChain message: its type is its role
    if isinstance(value, dict):
        named = _first(value, WHO_KEYS)
        role = value.get("role") or role
        stamp = _first(value, _WHEN_KEYS) or stamp
        said = _first(value, SAID_KEYS)
        if said is None:  # a writer's own key: the longest text that is not the speaker, role or time
            said = max((v for k, v in value.items() if isinstance(v, str) and k not in ("role", *WHO_KEYS,
                                                                                         *_WHEN_KEYS)),
                       key=len, default="")
        value = str(said)
    else:
        value = value if isinstance(value, str) else node["value"]
    text = value.split(_SUFFIX, 1)[0].strip()
    membase = _MEMBASE_TURN.match(text)
    if membase:
        named = named or membase.group("name")
        role = role or membase.group("role")
        text, stamp = membase.group("text").strip(), stamp or membase.group("stamp")
    speaker = named if isinstance(named, str) and named.strip() else _speaker_of(meta)
    m = _SPEAKER.match(text)
    if m and (speaker is None or m.group(1) == speaker):
        speaker, text = m.group(1), m.group(2)
    speaker = speaker or role or meta.get("speaker_role") or meta.get("role") or "user"
    out = {"speaker": str(speaker), "text": text, "session": session}
    if stamp:
        out["timestamp"] = str(stamp)
    return out


def _pipeline(meta: dict[str, Any], split: str | None) -> str | None:
    """The memory system: ``metadata.memory_system``, else MemBase's ``layer_type`` (NaiveRAG → rag), else the split."""
    declared = meta.get("memory_system")
    if isinstance(declared, str):
        return declared
    layer = meta.get("layer_type")
    if isinstance(layer, str) and layer.strip():
        return _LAYERS.get(re.sub(r"[^a-z0-9]", "", layer.lower()), slug(layer))
    return split


class _Converter:
    """One validated smartcomment graph → a memopt evolution graph."""

    def __init__(self, data: dict[str, Any], meta: dict[str, Any], source: str, split: str | None) -> None:
        self.source, self.meta = source, meta
        self.graph_id = str(data["graph_id"])
        self.conv = re.sub(r"[:\s/]+", "_", self.graph_id)
        self.nodes = {n["full_node_id"]: n for n in data["data"]["nodes"] if n["full_node_id"] != _SENTINEL}
        self.order = {fid: (n["created_at"], 0, i) for i, (fid, n) in enumerate(self.nodes.items())}
        self.ops = {o["op_id"]: o for o in data["data"]["operations"]}
        self.edges = sorted(enumerate(data["data"]["edges"]), key=lambda p: (p[1]["created_at"], p[0]))
        self.by_op: dict[str, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
        self.rank = {}
        for r, (i, e) in enumerate(self.edges):
            self.by_op[e["op_id"]].append((i, e))
            self.rank[i] = r
        written = {e["target_full_node_id"] for _, e in self.edges}
        self.kinds = {fid: base_kind(n, fid not in written) for fid, n in self.nodes.items()}
        self.kinds.update(conversation_roles(self.nodes, self.kinds, [e for _, e in self.edges],
                                             {o: op.get("category") for o, op in self.ops.items()}))
        self.kinds.update(judged_roles(self.kinds, [e for _, e in self.edges], written))
        self.kinds.update(chain_roles(self.nodes, self.kinds, [e for _, e in self.edges]))
        self.session_meta = {str(x.get("session_id")): x.get("metadata") or {}
                             for x in data["data"].get("sessions") or [] if isinstance(x, dict)}
        self.pipeline = _pipeline(meta, split)
        self.G = nx.DiGraph()
        self.keys: dict[str, tuple] = {}

    # --- who wrote what ---------------------------------------------------------------------------

    def _prepare(self) -> None:
        self.writer: dict[str, str] = {}
        self.copies: dict[str, list[str]] = defaultdict(list)
        for _, e in self.edges:
            t = e["target_full_node_id"]
            if t == _SENTINEL:
                continue
            if self.kinds[t] in _PER_OP:
                if e["op_id"] not in self.copies[t]:
                    self.copies[t].append(e["op_id"])
            else:
                self.writer.setdefault(t, e["op_id"])
        self.case_of_op: dict[str, str] = {}
        written_by = {fid: [op] for fid, op in self.writer.items()} | dict(self.copies)
        questions = {self._key(fid) for fid, kind in self.kinds.items() if kind == "question"}
        for op_id in sorted(self.by_op, key=lambda o: self.rank[self.by_op[o][0][0]]):
            if (self.ops.get(op_id) or {}).get("category") in _INGEST:
                continue
            sources = [e["source_full_node_id"] for _, e in self.by_op[op_id]]
            keys = [self._key(s) for s in sources if self.kinds.get(s) == "question"]
            keys += [self.case_of_op[w] for s in sources for w in written_by.get(s, ()) if w in self.case_of_op]
            named = re.sub(r"[^\w.-]+", "_", op_id.partition(":")[2])  # memopt's op ids: <op>:<graph>:<key>
            keys += [named] if named in questions else []
            if keys:
                self.case_of_op[op_id] = keys[0]
        asked = {self._key(fid): self.nodes[fid]["created_at"] for fid, kind in self.kinds.items()
                 if kind == "question"}
        self.case_of_op.update(serving_ops(self.case_of_op, [e for _, e in self.edges], written_by, asked,
                                           {o: op.get("category") for o, op in self.ops.items()}, _INGEST,
                                           {fid for fid, kind in self.kinds.items() if kind == "turn"}))
        self._roles()
        self._copy_ids()
        self._versions()

    def _roles(self) -> None:
        """The kind of each variable its category and class do not name: a store unit by the role it plays
        (`memopt.trace.store_units`; memopt's own files name every unit ``memory_entry``), an extraction op's
        LLM output a ``fact``, anything else its category."""
        native = any((op.get("metadata") or {}).get("memopt") for op in self.ops.values())
        units = set() if native else store_unit_names(self.nodes, self.kinds, [e for _, e in self.edges],
                                                      self.writer, self.case_of_op,
                                                      {o: str(op.get("op_name") or "") for o, op in self.ops.items()})
        for fid, kind in self.kinds.items():
            if kind is not None:
                continue
            op, category = self.writer.get(fid), self.nodes[fid]["category"]
            writes_facts = op is not None and (self.ops.get(op) or {}).get("category") == "extraction"
            self.kinds[fid] = ("memory" if self.nodes[fid]["full_name"] in units else
                               "fact" if writes_facts and category == "llm_response" else slug(category))

    def _key(self, fid: str) -> str:
        key = re.sub(r"[^\w.-]+", "_", self.nodes[fid].get("name") or fid)
        return f"q{key}" if re.fullmatch(r"op\d+(\.\d+)?", key) else key

    def _versions(self) -> None:
        """memopt versions of each unit: its smartcomment versions and its deletes, in time order."""
        events: dict[str, list[tuple[tuple, str]]] = defaultdict(list)
        self.deletes: dict[int, str] = {}
        for fid, n in self.nodes.items():
            if self.kinds[fid] == "memory":
                events[n["full_name"]].append((self.order[fid], fid))
        tied: dict[str, list[int]] = defaultdict(list)  # a marker no unit points at → its edges
        from_units = {e["target_full_node_id"] for _, e in self.edges if self.kinds.get(e["source_full_node_id"])
                      == "memory"}
        for i, e in self.edges:
            s, t = e["source_full_node_id"], e["target_full_node_id"]
            if t != _SENTINEL and self.kinds[t] == "marker" and self.kinds.get(s) == "memory":
                events[self.nodes[s]["full_name"]].append(((e["created_at"], 0, len(self.nodes) + i), f"#{i}"))
                self.keys[f"#{i}"] = (e["created_at"], 0, len(self.nodes) + i)
            elif t != _SENTINEL and self.kinds[t] == "marker" and t not in from_units:
                tied[t].append(i)
        units = {n["full_name"]: n["name"] for fid, n in self.nodes.items() if self.kinds[fid] == "memory"}
        shared: dict[int, list[int]] = {}
        named = set()
        for marker, edges in tied.items():
            unit = unit_named(self.nodes[marker], units)
            if unit is not None:  # a marker named after the unit it deletes (no edge from the unit)
                named.add(marker)
                first = edges[0]
                key = (self.edges_by_index[first]["created_at"], 0, len(self.nodes) + first)
                events[unit].append((key, f"#{first}"))
                self.keys[f"#{first}"] = key
                shared[first] = edges
        self.evicted = evicted_turns(self.nodes, self.kinds, {m: [self.edges_by_index[i] for i in edges]
                                                             for m, edges in tied.items() if m not in named})
        self.ids: dict[str, str] = {}
        self.tied: dict[int, str] = {}  # edge → the unit version a marker named after the unit deleted
        for name, items in events.items():
            for version, (_, ref) in enumerate(sorted(items), start=1):
                node = f"memory:{name}@{version}"
                if not ref.startswith("#"):
                    self.ids[ref] = node
                    continue
                for i in shared.get(int(ref[1:]), [int(ref[1:])]):
                    self.deletes[i] = node
                    if int(ref[1:]) in shared and version > 1:
                        self.tied[i] = f"memory:{name}@{version - 1}"

    def node_id(self, fid: str, reader: str | None = None) -> str:
        """The memopt id of a smartcomment variable as op ``reader`` sees it (answers and contexts: per op)."""
        kind, n = self.kinds[fid], self.nodes[fid]
        if kind == "memory":
            return self.ids[fid]
        if kind == "turn":
            return f"turn:{n['full_name']}@{n['version']}"
        if kind == "question":
            return f"question:{self.conv}:{self._key(fid)}@{n['version']}"
        if kind in _PER_OP and self.copies.get(fid):
            writers = self.copies[fid]
            key = self.case_of_op.get(reader)
            op = reader if reader in writers else next(
                (w for w in writers if self.case_of_op.get(w) == key and key), writers[-1])
            return self.copy_ids[(fid, op)]
        return f"{kind}:{n['full_name']}@{n['version']}"

    def _copy_ids(self) -> None:
        """The memopt id of each copy of a context or an answer (one per op that wrote it): the question's
        ``context:<graph>:<key>``, versions in the order they were written, so a question's retrieved list and
        the smaller context a rerank made of it are two versions, never one node."""
        self.copy_ids: dict[tuple[str, str], str] = {}
        count: dict[str, int] = defaultdict(int)
        for _, e in self.edges:
            t, op = e["target_full_node_id"], e["op_id"]
            if t == _SENTINEL or self.kinds[t] not in _PER_OP or (t, op) in self.copy_ids:
                continue
            base = f"{self.kinds[t]}:{self.conv}:{self.case_of_op.get(op) or slug(self.nodes[t]['full_name'])}"
            count[base] += 1
            self.copy_ids[(t, op)] = f"{base}@{count[base]}"

    # --- ops ---------------------------------------------------------------------------------------

    def _sub_ops(self, op_id: str) -> list[tuple[list[str], list[str], tuple]]:
        """(reads, writes, time key) of each memopt op one smartcomment op becomes."""
        sources: dict[str, set[str]] = {}
        first: dict[str, tuple] = {}
        read_only: list[str] = []
        stash = (self.ops.get(op_id, {}).get("metadata") or {}).get("memopt")
        plain = {e["source_full_node_id"] for _, e in self.by_op[op_id]
                 if self.kinds.get(e["target_full_node_id"]) != "marker"}
        for i, e in self.by_op[op_id]:
            s, t = e["source_full_node_id"], e["target_full_node_id"]
            src = None if s == _SENTINEL else self.node_id(s, op_id)
            if t == _SENTINEL:
                read_only += [src] if src else []
                continue
            if i in self.deletes:
                target = self.deletes[i]
                src = src if not stash or s in plain else None
                if i in self.tied:  # the unit version a marker named after it deleted is read by the delete
                    sources.setdefault(target, set()).add(self.tied[i])
            elif self.writer.get(t) == op_id or op_id in self.copies.get(t, ()):
                target = self.node_id(t, op_id)
            else:
                read_only += [x for x in (src, self.node_id(t, op_id)) if x]
                continue
            sources.setdefault(target, set()).update({src} if src else set())
            first.setdefault(target, (e["created_at"], 1, i))
        groups: dict[frozenset[str], list[str]] = {}
        for target, reads in sources.items():
            groups.setdefault(frozenset(reads), []).append(target)
        out = [(sorted(k), v, min(first[t] for t in v)) for k, v in groups.items()]
        if read_only or not out:
            start = self.by_op[op_id][0][1]["created_at"] if self.by_op[op_id] else self.ops[op_id]["created_at"]
            out.insert(0, (list(dict.fromkeys(read_only)), [], (start, 1, self.by_op[op_id][0][0] if
                                                                self.by_op[op_id] else -1)))
        return out

    def _operation(self, op: dict[str, Any], writes: list[str], keyed: bool) -> str:
        prefix, dot, named = str(op.get("op_name") or "").rpartition(".")
        if dot and prefix == self.pipeline and _IDENTIFIER.fullmatch(named):
            return named
        kinds = {self.G.nodes[w]["kind"] for w in writes}
        if "answer" in kinds:
            return "answer"
        if "context" in kinds:
            return "fuse"
        category = (op.get("category") or "operation").lower()
        if category == "retrieval":
            return "retrieve" if keyed else "search_similar"
        named = _OPERATION.get(category, slug(category))
        return slug(category) if named == "answer" else named  # only the op that writes the prediction answers

    # --- the graph ---------------------------------------------------------------------------------

    def _add_var(self, node: str, fid: str, deleted_edge: int | None = None) -> None:
        if node in self.G:
            return
        n, kind = self.nodes[fid], node.split(":", 1)[0]
        base, _, version = node.rpartition("@")
        if deleted_edge is not None:
            previous = self.G.nodes.get(f"{base}@{int(version) - 1}", {})
            value, created_at = previous.get("value"), self.edges_by_index[deleted_edge]["created_at"]
            self.keys[node] = self.keys[f"#{deleted_edge}"]
        else:
            value = _turn_value(n, self.session_index.get(fid, 0)) if kind == "turn" else decode_value(
                n["value"])
            if kind in ("question", "answer") and isinstance(value, dict) and _first(value, SAID_KEYS):
                value = _first(value, SAID_KEYS)  # a message object {"role", "text"}: what it says
            created_at = n["created_at"]
            self.keys[node] = self.order[fid]
        attrs: dict[str, Any] = {"type": "variable", "kind": kind, "name": base, "version": int(version),
                                 "value": value, "sc_id": fid, "sc_category": n["category"],
                                 "sc_class": n.get("class_name"), "created_at": created_at,
                                 "metadata": n.get("metadata") or {}}
        if kind == "turn" and "timestamp" in value:  # the message's own date (value or text) joins its metadata
            attrs["metadata"] = {**attrs["metadata"], "timestamp": attrs["metadata"].get("timestamp")
                                 or value.pop("timestamp")}
            value.pop("timestamp", None)
        said = date_of(attrs["metadata"]) or date_of(self.session_meta.get(str(n.get("session_id"))))
        if kind == "memory":
            gone = deleted_edge is not None or (int(version) > 1 and (is_tombstone(value, n.get("metadata"))
                                                                      or is_emptied(value)))
            attrs.update(action="DELETE" if gone else ("ADD" if int(version) == 1 else "UPDATE"), deleted=gone)
            if n.get("class_name") == "chunk":  # a store unit of raw conversation text (RAG's chunks)
                attrs["kind"] = "chunk"
            stamp = (value.get("timestamp") if isinstance(value, dict) else None) or attrs["metadata"].get("timestamp")
            if stamp or said:
                attrs["session_date"] = str(stamp or said)
        elif said and kind not in ("question", "answer", "gold", "judgement"):
            attrs["session_date"] = said
        self.G.add_node(node, **attrs)

    def _ensure(self, node: str) -> None:
        if node not in self.G:
            fid = self.fid_of[node]
            self._add_var(node, *fid) if isinstance(fid, tuple) else self._add_var(node, fid)

    def build(self) -> nx.DiGraph:
        """The memopt graph (see the module docstring)."""
        self.edges_by_index = {i: e for i, e in self.edges}
        self._prepare()
        self.session_index = self._sessions()
        self.fid_of: dict[str, Any] = {}
        plain_markers = {e[end] for i, e in self.edges if i not in self.deletes
                         for end in ("source_full_node_id", "target_full_node_id")}
        for fid in self.nodes:
            if self.kinds[fid] == "marker" and fid not in plain_markers:
                continue
            if self.kinds[fid] in _PER_OP and self.copies.get(fid):
                for op in self.copies[fid]:
                    self.fid_of[self.node_id(fid, op)] = fid
            else:
                self.fid_of[self.node_id(fid)] = fid
        for i, node in self.deletes.items():
            self.fid_of[node] = (self.edges_by_index[i]["target_full_node_id"], i)
        for node in sorted(self.fid_of, key=lambda v: (v.rpartition("@")[0], int(v.rpartition("@")[2]))):
            self._ensure(node)
        position = {o: n for n, o in enumerate(self.ops)}
        ordered = sorted(self.ops, key=lambda o: (self.by_op[o][0][1]["created_at"] if self.by_op[o] else
                                                  self.ops[o]["created_at"], position[o]))
        used: dict[str, int] = defaultdict(int)
        for number, op_id in enumerate(ordered, start=1):
            subs = self._sub_ops(op_id)
            for part, (reads, writes, key) in enumerate(subs, start=1):
                for v in [*reads, *writes]:
                    self._ensure(v)
                self._add_op(op_id, number, part if len(subs) > 1 else 0, reads, writes, key, used)
        self._clock()
        first = {}
        for n, d in sorted(self.G.nodes(data=True), key=lambda p: p[1].get("start") or 0):
            if d["type"] == "op":
                first.setdefault(d["sc_op_id"], n)
        for fid, op in self.evicted.items():
            if op in first:
                self.G.nodes[self.node_id(fid)]["evicted"] = first[op]
        self._provenance()
        name_references(self.G, [n for n, d in self.G.nodes(data=True)
                                 if d["type"] == "op" and d.get("sc_op_id") in self.case_of_op])
        self._graph_attrs()
        return self.G

    def _sessions(self) -> dict[str, int]:
        """Turn full id → session index: smartcomment sessions, or (one session per message, as MemBase records
        them) the day of each message's timestamp."""
        turns = [n for n in self.nodes.values() if self.kinds[n["full_node_id"]] == "turn"]
        keys = {n["full_node_id"]: n["session_id"] for n in turns}
        if len(turns) > 1 and len(set(keys.values())) == len(turns):
            days = {fid: read_day(_turn_value(self.nodes[fid], 0).get("timestamp") or "") for fid in keys}
            if all(days.values()):
                keys = {fid: str(day) for fid, day in days.items()}
        index = {k: i for i, k in enumerate(dict.fromkeys(keys.values()), start=1)}
        return {fid: index[k] for fid, k in keys.items()}

    def _add_op(self, op_id: str, number: int, part: int, reads: list[str], writes: list[str], key: tuple,
                used: dict[str, int]) -> None:
        op = self.ops.get(op_id) or {"op_id": op_id, "op_name": "link", "category": "link", "created_at": key[0]}
        case = self.case_of_op.get(op_id)
        operation = self._operation(op, writes, case is not None)
        if case is not None and operation != "judge":
            used[f"{operation}:{case}"] += 1
            count = used[f"{operation}:{case}"]
            node = f"{operation}{'.' + str(count) if count > 1 else ''}:{self.conv}:{case}"
        else:
            node = f"{operation}:{self.conv}:op{number}{'.' + str(part) if part else ''}"
        output = [self.G.nodes[w]["value"] for w in writes] or None
        self.G.add_node(node, type="op", operation=operation, pipeline=self.pipeline,
                        op_kind="tool" if operation in ("retrieve", "search_similar", "fuse") else "llm",
                        predictor=None, prompt_version=None, inputs={}, inputs_hash=inputs_hash({}), output=output,
                        start=None, end=None, started_at=op["created_at"], seconds=None, lm_calls=0, input_tokens=0,
                        output_tokens=0, error=None, overridden=False, parent=None, sc_op_id=op_id,
                        sc_op_name=op.get("op_name"), sc_category=op.get("category"), comment=op.get("comment"),
                        sc_metadata=op.get("metadata") or {})
        stage = _stage(operation, op.get("category")) or (None if case is not None or operation == "judge"
                                                          else self._acted(reads, writes))
        if stage is not None:
            self.G.nodes[node]["category"] = stage
        self.keys[node] = key
        self.G.add_edges_from(((v, node) for v in reads), rel="read")
        self.G.add_edges_from(((node, v) for v in writes), rel="write")

    def _acted(self, reads: list[str], writes: list[str]) -> str | None:
        """The stage of an ingestion op its category does not name, from what it did: a delete → deletion, a new
        version of an existing unit → update, anything written from conversation turns → extraction."""
        if any(self.G.nodes[w].get("deleted") for w in writes):
            return "deletion"
        if any("action" in self.G.nodes[w] and self.G.nodes[w]["version"] > 1 for w in writes):
            return "update"
        if writes and any(self.G.nodes[r]["kind"] == "turn" for r in reads):
            return "extraction"
        return None

    def _clock(self) -> None:
        G, H = self.G, nx.DiGraph(self.G.edges)
        H.add_nodes_from(G)
        chains: dict[str, list[str]] = defaultdict(list)
        for n, d in G.nodes(data=True):
            if d["type"] == "variable":
                chains[d["name"]].append(n)
        for chain in chains.values():
            nx.add_path(H, sorted(chain, key=lambda v: G.nodes[v]["version"]))
        try:
            order = list(nx.lexicographical_topological_sort(H, key=lambda n: (*self.keys[n], n)))
        except nx.NetworkXUnfeasible:
            cycle = " -> ".join(u for u, _ in nx.find_cycle(H))
            raise DataError(f"{self.source}: data.edges: the edges and versions form a cycle ({cycle}); an "
                            "execution graph is acyclic.") from None
        for tick, n in enumerate(order, start=1):
            G.nodes[n]["created" if G.nodes[n]["type"] == "variable" else "start"] = tick
        for n, d in G.nodes(data=True):
            if d["type"] == "op":
                d["end"] = max([d["start"], *(G.nodes[v]["created"] for v in G.successors(n))])

    def _provenance(self) -> None:
        """``sources``: the dia_ids of the turns each variable derives from, through the ops."""
        G, found = self.G, {}
        for n in nx.topological_sort(G):
            d = G.nodes[n]
            if d.get("kind") == "turn":
                found[n] = frozenset({d["name"].removeprefix("turn:")})
                continue
            parents = set(G.predecessors(n))
            if d["type"] == "variable":
                previous = f"{d['name']}@{d['version'] - 1}"
                parents |= {previous} if previous in G and d.get("kind") == "memory" else set()
            found[n] = frozenset().union(*(found.get(p, frozenset()) for p in parents))
            if d["type"] == "variable" and found[n]:
                d["sources"] = sorted(found[n])

    def _graph_attrs(self) -> None:
        G, cases = self.G, []
        gold, judged = self._gold(), verdicts(G)
        for _, d in sorted(G.nodes(data=True), key=lambda p: p[1].get("created", 0)):
            if d.get("kind") != "question":
                continue
            key = d["name"].rsplit(":", 1)[-1]
            if f"answer:{self.conv}:{key}@1" not in G:
                continue
            meta = d["metadata"]
            evidence = list(turn_refs(G, [e for key in ("evidence", "evidence_ids", "source_evidence_ids")
                                          for e in meta.get(key) or [] if isinstance(e, str)]))
            asked = date_of(meta, ("question_date", "date")) or date_of(
                self.session_meta.get(str(self.nodes[d["sc_id"]].get("session_id"))), ("question_date",))
            cases.append({"case_id": f"{self.conv}:{key}", "key": key, "question": str(d["value"]),
                          "gold": gold.get(key, ""), "evidence": evidence,
                          "category": meta.get("category") or meta.get("question_type"),
                          **({"date": asked} if asked else {}),
                          **({"judged": judged[key]} if key in judged else {})})
        sessions = {}
        for _, d in sorted(G.nodes(data=True), key=lambda p: p[1].get("created", 0)):
            if d.get("kind") == "turn":
                stamp = date_of(d["metadata"]) or d.get("session_date") or d["created_at"]
                sessions.setdefault(d["value"]["session"], str(stamp))
        declared = self.meta.get("operations")
        operations = {str(k): v for k, v in declared.items() if isinstance(v, dict)} if isinstance(declared, dict) \
            else {}
        G.graph.update(schema_version=SCHEMA_VERSION, conversation=self.conv, speakers={}, pipeline=self.pipeline,
                       sessions=[{"index": i, "date_time": t} for i, t in sorted(sessions.items())], cases=cases,
                       operations=operations, knobs={}, instructions={}, prompt_versions={}, lm=None, simulated=False,
                       graph_id=self.graph_id, file=self.meta.get("memtracebench_graph_filename"))

    def _gold(self) -> dict[str, str]:
        gold: dict[str, str] = {}
        for n, d in self.G.nodes(data=True):
            if d.get("kind") == "gold":
                value = gold_text(d["value"])
                # a judge reads it beside the question (or beside the question's answer), or an eval harness
                # wrote it from the question
                for op in [*self.G.successors(n), *self.G.predecessors(n)]:
                    case = next((q for q in self.G.predecessors(op) if self.G.nodes[q].get("kind") == "question"),
                                None) or next((q for q in self.G.predecessors(op)
                                               if self.G.nodes[q].get("kind") == "answer"), None)
                    if case is not None:
                        gold.setdefault(self.G.nodes[case]["name"].rsplit(":", 1)[-1], value)
        return gold


def convert(data: dict[str, Any], *, source: str, split: str | None = None) -> nx.DiGraph:
    """The memopt evolution graph of a validated smartcomment document (``ExecNetwork.export_graph()`` shape)."""
    return _Converter(data, data.get("metadata") or {}, source, split).build()
