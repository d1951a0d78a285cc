"""Evolution graphs from a Mem0 recording: the same schema `memopt run --trace` writes, one graph per user id.

The records are replayed, in recording order, as the events memopt's own tracer consumes
(`memopt.trace.tracer.Tracer`), so the graphs are built by the code that builds every other graph.
Per ``Memory.add`` (a session): an ``extract`` op (LLM) reads the session's turns and writes one
``fact`` variable per extracted fact (its turns found by word overlap); on 1.x a ``search_similar``
op reads the memory versions the vector search returned and an ``update`` op (LLM) reads them with
the facts and writes the memory versions of the history rows Mem0 wrote in that call (ADD / UPDATE /
DELETE). The update op keeps every decision of its reply in ``decisions``, NONE included, each with
the memory version it concerns (``memory``) and the one it wrote (``written``). On 2.x the extract
op writes the ADD rows itself. Per recorded answer: a ``retrieve`` op reads the memory versions the
``Memory.search`` it names returned and writes the ``context``; an ``answer`` op reads the question
and the context and writes the ``answer``.

Ops are declared (`LIVE_OPERATIONS`) with their taxonomy stages, so attribution, ``memopt show`` and
MemTraceBench export read these graphs as they read any other. The graph's ``pipeline`` is ``mem0``
(its ops are those of memopt's ``mem0`` system); ``source`` says which Mem0 it came from.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import networkx as nx

from memopt.live.decode import AddStep, Decoder, decoder_for
from memopt.systems.base import OpSpec
from memopt.systems.events import OpEvent, StoreEvent, VarEvent, conversation_scope
from memopt.systems.ops import OpCall
from memopt.systems.prompts import prompt_hash

__all__ = ["build_graphs", "LIVE_OPERATIONS", "PIPELINE"]

PIPELINE = "mem0"
_EXTRACT = OpSpec("extract", "llm", "ingest", "Mem0's fact extraction of one add() call", stages="extraction")
_SEARCH = OpSpec("search_similar", "tool", "ingest", "Mem0's vector search for the memories similar to each new "
                 "fact (top 5 each)", stages="retrieval")
_UPDATE = OpSpec("update", "llm", "ingest", "Mem0's ADD / UPDATE / DELETE / NONE decision for the new facts against "
                 "the memories found", stages=("update", "deletion"), steered_by="search_similar")
_RETRIEVE = OpSpec("retrieve", "tool", "query", "Memory.search for the question", stages="retrieval")
_ANSWER = OpSpec("answer", "llm", "query", "the application's answer from the retrieved memories", stages="response")
_EXTRACT_V2 = OpSpec("extract", "llm", "ingest", "Mem0's ADD-only extraction of one add() call",
                     stages=("extraction", "update"))
LIVE_OPERATIONS: dict[int, tuple[OpSpec, ...]] = {1: (_EXTRACT, _SEARCH, _UPDATE, _RETRIEVE, _ANSWER),
                                                  2: (_EXTRACT_V2, _RETRIEVE, _ANSWER)}
_NAMED = re.compile(r"^(?P<speaker>[A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,2}):\s+(?P<text>\S.*)$", re.DOTALL)


def _speaker_and_text(message: dict[str, Any]) -> tuple[str, str]:
    content = str(message.get("content") or "")
    m = _NAMED.match(content)
    if m:
        return m.group("speaker"), m.group("text")
    return str(message.get("name") or message.get("role") or "user").capitalize(), content


class _Builder:
    """Replays decoded records into a memopt `Tracer`."""

    def __init__(self, decoder: Decoder) -> None:
        from memopt.trace.tracer import Tracer

        self.decoder = decoder
        self.tracer = Tracer()
        self.units: dict[str, dict[str, Any]] = {}  # memory_id -> {version, sources, text}
        self.turns: dict[str, list[dict[str, Any]]] = defaultdict(list)  # user -> [{dia_id, speaker, text}]
        self.sessions: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.speakers: dict[str, list[str]] = defaultdict(list)
        self.prompts: dict[str, dict[str, str]] = defaultdict(dict)

    # --- events --------------------------------------------------------------------------------------
    def emit(self, event: Any) -> None:
        self.tracer.handle(event)

    @contextmanager
    def op(self, user: str, op: str, key: str, kind: str, inputs: dict[str, Any], reads: list[str],
           prompt: str | None = None) -> Iterator[dict[str, Any]]:
        op_id = f"{op}:{user}:{key}"
        version = prompt_hash(prompt) if prompt is not None else None
        if prompt is not None:
            self.prompts[user][op] = prompt
        call = OpCall(op_id, op, PIPELINE, kind, inputs, tuple(reads), version, op if prompt is not None else None,
                      prompt)
        self.emit(OpEvent("op", "start", op_id, op, PIPELINE, {"call": call, "parent": None, "time": 0.0}))
        result: dict[str, Any] = {"op_id": op_id, "output": None}
        yield result
        self.emit(OpEvent("op", "end", op_id, op, PIPELINE, {"output": result["output"], "seconds": None,
                                                             "time": 0.0}))

    def var(self, ref: str, value: Any, derived: list[str], op_id: str | None) -> str:
        self.emit(VarEvent("var", ref, value, op_id, tuple(derived)))
        return ref

    def ref(self, memory_id: str) -> str | None:
        unit = self.units.get(memory_id)
        return f"memory:{memory_id}@{unit['version']}" if unit else None

    # --- ingestion -------------------------------------------------------------------------------------
    def add_turns(self, step: AddStep) -> tuple[str, list[dict[str, Any]], str | None]:
        user, note = step.user_id, step.session or {}
        index = note.get("index")
        key = f"S{index}" if index is not None else f"A{step.call}"
        date = note.get("date_time") or (step.metadata or {}).get("session_date") or step.at
        ids = note.get("dia_ids") or []
        turns = []
        for i, message in enumerate(m for m in step.messages if isinstance(m, dict) and m.get("role") != "system"):
            speaker, text = _speaker_and_text(message)
            dia_id = ids[i] if i < len(ids) else f"{key}:{i + 1}"
            turns.append({"dia_id": dia_id, "speaker": speaker, "text": text})
            if speaker not in self.speakers[user]:
                self.speakers[user].append(speaker)
        self.sessions[user].append({"index": index if index is not None else len(self.sessions[user]) + 1,
                                    "date_time": date})
        self.turns[user].extend(turns)
        for turn in turns:
            self.var(f"turn:{turn['dia_id']}", {"speaker": turn["speaker"], "text": turn["text"], "session": index},
                     [], None)
        return key, turns, date

    def ingest(self, step: AddStep) -> None:
        from memopt.systems.helpers import best_sources

        key, turns, date = self.add_turns(step)
        user = step.user_id
        turn_objs = [_Turn(t["dia_id"], t["text"]) for t in turns]
        turn_refs = [f"turn:{t['dia_id']}" for t in turns]
        fact_refs: list[str] = []
        writer: str | None = None
        if step.extraction_prompt is not None:
            saw = [r for r in (self.ref(s["id"]) for s in step.seen) if r] if self.decoder.major == 2 else []
            with self.op(user, "extract", key, "llm", {"conversation": step.extraction_input, "session_date": date},
                         turn_refs + saw, step.extraction_prompt) as extract:
                for i, fact in enumerate(step.facts):
                    sources = best_sources(fact, turn_objs)
                    fact_refs.append(self.var(f"fact:{user}:{key}.{i}", fact, [f"turn:{d}" for d in sources],
                                              extract["op_id"]))
                extract["output"] = {"facts": list(step.facts)}
                if self.decoder.major == 2:
                    self.write_history(step, extract["op_id"], turn_objs, date)
            writer = extract["op_id"]
        if self.decoder.major != 1 or not step.facts:
            if self.decoder.major == 1:
                self.write_history(step, writer, turn_objs, date)
            return
        with self.op(user, "search_similar", key, "tool", {"facts": list(step.facts), "k": 5}, []) as search:
            results = tuple((s["id"], self.units[s["id"]]["version"]) for s in step.seen if s["id"] in self.units)
            self.emit(StoreEvent("store", "SEARCH", "memory", 0, search["op_id"], results=results))
            search["output"] = [s["id"] for s in step.seen]
        seen_refs = {s["local"]: self.ref(s["id"]) for s in step.seen}
        if step.decisions is None:
            self.write_history(step, writer, turn_objs, date)
            return
        reads = [r for r in seen_refs.values() if r] + fact_refs
        inputs = {"existing_memories": [{"id": s["local"], "text": s["text"]} for s in step.seen],
                  "new_facts": list(step.facts)}
        with self.op(user, "update", key, "llm", inputs, reads, step.update_prompt or "") as update:
            written = self.write_history(step, update["op_id"], turn_objs, date)
            update["output"] = {"memory": step.decisions}
        self.tracer.graphs[user].nodes[update["op_id"]]["decisions"] = _decisions(step, seen_refs, written)

    def write_history(self, step: AddStep, op_id: str | None, turns: list[Any],
                      date: str | None) -> list[dict[str, Any]]:
        from memopt.systems.helpers import best_sources

        written = []
        for row in step.history:
            memory_id, action = str(row["memory_id"]), str(row["event"])
            if action not in ("ADD", "UPDATE", "DELETE"):
                continue
            unit = self.units.get(memory_id)
            if action != "ADD" and unit is None:
                continue
            text = str(row.get("new_memory") or "") if action != "DELETE" else unit["text"]
            new_sources = best_sources(text, turns) if action != "DELETE" else []
            sources = list(dict.fromkeys((unit["sources"] if unit else []) + new_sources))
            version = unit["version"] + 1 if unit else 1
            self.units[memory_id] = {"version": version, "sources": sources, "text": text}
            self.emit(StoreEvent("store", action, "memory", int(row.get("rowid") or 0), op_id, unit_id=memory_id,
                                 version=version, text=text,
                                 metadata={"source": sources, "session_date": date, "speaker": None}))
            written.append({"memory_id": memory_id, "action": action, "text": text,
                            "ref": f"memory:{memory_id}@{version}"})
        return written

    # --- questions -------------------------------------------------------------------------------------
    def answer(self, case: dict[str, Any], search: dict[str, Any] | None, number: int) -> dict[str, Any]:
        from memopt.systems.helpers import item_line

        user = str(case["user_id"])
        key = str(case.get("case_id") or f"q{number}").split(":")[-1]
        question = self.var(f"question:{user}:{key}", case["question"], [], None)
        hits = [h for h in (search or {}).get("results") or [] if isinstance(h, dict)]
        with self.op(user, "retrieve", key, "tool", {"query": case["question"], "k": (search or {}).get("limit")},
                     []) as retrieve:
            present = [(str(h.get("id")), h) for h in hits if str(h.get("id")) in self.units]
            self.emit(StoreEvent("store", "SEARCH", "memory", 0, retrieve["op_id"], query=case["question"],
                                 results=tuple((i, self.units[i]["version"]) for i, _ in present)))
            retrieve["output"] = [{"id": i, "text": h.get("memory"), "score": h.get("score")} for i, h in present]
            context = case.get("context")
            if context is None:
                context = "\n".join(item_line((h.get("metadata") or {}).get("session_date"), str(h.get("memory")))
                                    for _, h in present)
            context_ref = self.var(f"context:{user}:{key}", context, [self.ref(i) for i, _ in present],
                                   retrieve["op_id"])
        with self.op(user, "answer", key, "llm", {"question": case["question"], "context": context},
                     [question, context_ref], case.get("prompt") or "") as answer:
            answer["output"] = {"answer": case["answer"]}
            self.var(f"answer:{user}:{key}", case["answer"] if case["answer"] is not None else "", [context_ref],
                     answer["op_id"])
        return {"case_id": case.get("case_id") or f"{user}:{key}", "key": key, "question": case["question"],
                "gold": case.get("gold"), "evidence": list(case.get("evidence") or []),
                "category": case.get("category"), **({"date": case["date"]} if case.get("date") else {})}


class _Turn:
    """What `best_sources` reads of a turn."""

    def __init__(self, dia_id: str, text: str) -> None:
        self.dia_id, self.text = dia_id, text


def _decisions(step: AddStep, seen: dict[str, str | None], written: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every decision of the update reply with the memory version it concerns and the one it wrote."""
    by_local = {s["local"]: s["id"] for s in step.seen}
    left = list(written)
    out = []
    for decision in step.decisions or []:
        event, local = str(decision.get("event") or ""), str(decision.get("id") or "")
        target = by_local.get(local) if event != "ADD" else None
        match = next((w for w in left if w["action"] == event and (w["memory_id"] == target if target else
                                                                    w["text"] == str(decision.get("text") or "").strip()
                                                                    or event == "ADD")), None)
        if match is not None:
            left.remove(match)
        out.append({"event": event, "id": local, "text": decision.get("text"), "old_memory": decision.get("old_memory"),
                    "memory": seen.get(local) if event != "ADD" else None, "memory_id": target or
                    (match["memory_id"] if match else None), "written": match["ref"] if match else None})
    return out


def _steps(decoder: Decoder, records: list[dict[str, Any]]) -> Iterator[tuple[str, Any]]:
    """``("add", AddStep)`` at the end of each add call and ``("case", (case, search))`` per case, in order; a
    ``Memory.search`` no case names is a case of its own (its query the question, its answer unknown)."""
    notes: dict[str, dict[str, Any]] = {}
    open_steps: dict[int, AddStep] = {}
    searches: dict[int, dict[str, Any]] = {}
    named = {r.get("search_call") for r in records if r.get("type") == "case"}
    for record in sorted(records, key=lambda r: r.get("seq", 0)):
        kind, call = record["type"], record.get("call")
        if kind == "session":
            notes[str(record.get("user_id"))] = record
        elif kind == "add" and record.get("phase") == "start":
            user = str(record.get("user_id") or "user")
            open_steps[call] = AddStep(call, user, list(record.get("messages") or []),
                                       dict(record.get("metadata") or {}), notes.pop(user, None),
                                       at=record.get("at"))
        elif kind == "add" and call in open_steps:
            step = open_steps.pop(call)
            step.error = record.get("error")
            yield "add", step
        elif kind == "search":
            searches.setdefault(call, {}).update({k: v for k, v in record.items() if k in ("user_id", "query", "limit",
                                                                                        "results", "at")})
            found = searches[call]
            if record.get("phase") == "end" and call not in named and found.get("query") and found.get("user_id"):
                yield "case", ({"user_id": found["user_id"], "case_id": f"{found['user_id']}:s{call}",
                                "question": str(found["query"]), "answer": None, "search_call": call}, found)
        elif kind == "case":
            yield "case", (record, searches.get(record.get("search_call")))
        elif call in open_steps:
            _fold(decoder, open_steps[call], record)


def _fold(decoder: Decoder, step: AddStep, record: dict[str, Any]) -> None:
    kind = record["type"]
    if kind == "llm":
        decoder.decode_llm(step, record)
    elif kind == "vs.search":
        step.searches.append(record)
        known = {s["id"] for s in step.seen}
        for hit in record.get("hits") or []:
            if hit["id"] not in known:
                known.add(hit["id"])
                step.seen.append({"local": str(len(step.seen)), "id": hit["id"], "text": hit.get("text") or ""})
    elif kind == "history":
        step.history.extend(record.get("rows") or [])


def build_graphs(header: dict[str, Any], records: list[dict[str, Any]], *, run_id: str | None = None,
                 source: str | None = None) -> dict[str, nx.DiGraph]:
    """One evolution graph per user id of a recording (`memopt.live.records.read_records`)."""
    decoder = decoder_for(str(header.get("mem0_version")))
    builder = _Builder(decoder)
    cases: dict[str, list[dict[str, Any]]] = defaultdict(list)
    number = 0
    for kind, item in _steps(decoder, records):
        if kind == "add":
            with conversation_scope(item.user_id):
                builder.ingest(item)
        else:
            case, search = item
            number += 1
            with conversation_scope(str(case["user_id"])):
                cases[str(case["user_id"])].append(builder.answer(case, search, number))
    specs = {spec.name: spec.to_dict() for spec in LIVE_OPERATIONS[decoder.major]}
    for user, G in builder.tracer.graphs.items():
        speakers = builder.speakers[user]
        G.graph.update(
            pipeline=PIPELINE, operations=specs, speakers={"a": speakers[0] if speakers else "",
                                                           "b": speakers[1] if len(speakers) > 1 else ""},
            sessions=builder.sessions[user], cases=cases[user], instructions=builder.prompts[user],
            prompt_versions={op: prompt_hash(text) for op, text in builder.prompts[user].items()},
            lm=header.get("lm"), simulated=bool(header.get("simulated")), knobs={},
            source={"system": f"mem0ai {header.get('mem0_version')}", "recording": source}, run_id=run_id)
    return builder.tracer.graphs
