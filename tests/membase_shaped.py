"""An independent generator of MemBase-shaped MemTraceBench graphs (kept apart from `tests/memtracebench_fixtures`).

It emulates, from a reading of the public MemBase layers (never their code), how MemBase traces its four
systems with smartcomment 0.1.2, and writes each run with smartcomment's own exporter
(``ExecNetwork.export_graph()``) plus MemTraceBench's ``data.annotations``:

- **messages** as MemBase records them: a JSON dict ``{content, name, role, timestamp}`` whose content reads
  ``Speaker <name> (role: user) says: ...`` (both speakers have role ``user``; the name tells them apart),
  the speaker also in ``metadata.speakers``; graph metadata carries only MemBase's ``layer_type``.
- **NaiveRAG**: a ``message-buffer`` mutated by ``memory_system.message_buffer_update`` (category update);
  a full buffer emits a ``temporary_variable`` document (an extraction hop inside the same op) and
  ``memory_system.add`` stores it as a unit; ``memory_system.retrieve`` reads units from the query.
- **Long-Context**: one ``memory-unit`` mutated by ``memory_system.memory_update`` per message (oldest
  messages trimmed past the window); retrieval reads it.
- **EverMemOS**: a message buffer; ``evermemos.boundary_detection`` writes a ``no_split_marker`` (category
  ``marker``, not a delete) or a memcell; ``evermemos.episode_extraction`` writes a raw response and a
  parsed ``episode_memory`` (a link), stored as a unit; bm25 / embedding / hybrid retrieval write
  ``sparse`` / ``dense`` / ``hybrid_retrieval_results`` lists.
- **Mem0-ish**: ``memory_system.extract_facts`` (raw response → facts), ``memory_system.update_memory_decision``
  (ADD / UPDATE as a mutation / DELETE as a link to a ``DELETED`` marker), ``memory_system.search_vector_store``.
- question answering (units → context → prediction, hash identities) and an ``llm-judge`` op per question,
  golden answers sometimes as lists, gold dates resolved from relative mentions, numbers written as words.

Every question fails through one fault the generator put in; the annotation blames the op where the
information was first lost (MemTrace's definitions). Seeds ``TUNED`` and ``HELD_OUT`` make the two halves.

    python -m tests.membase_shaped OUT_DIR [tuned|held_out]     # writes OUT_DIR/<split>/<graph>.json
"""

from __future__ import annotations

import datetime as dt
import json
import random
import sys
from functools import partial
from pathlib import Path
from typing import Any

TUNED = (1, 2, 3)
HELD_OUT = (101, 102, 103)
SPLITS = ("rag", "mem0", "evermemos", "long_context")
LAYER = {"rag": "NaiveRAG", "mem0": "Mem0", "evermemos": "EverMemOS", "long_context": "Long-Context"}
_JSON = partial(json.dumps, ensure_ascii=False, indent=4, sort_keys=True)
_PAIRS = [("Caroline", "Melanie"), ("Jon", "Gina"), ("Priya", "Marcus"), ("Tomas", "Ines"), ("Aiko", "Bruno"),
          ("Fatima", "Oliver")]
_WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}
_FILLER = ["How has your week been?", "Honestly pretty hectic, work keeps piling up.", "That sounds exhausting.",
           "Haha, tell me about it.", "Did you end up watching that documentary?", "Not yet, it's on my list.",
           "I love that you always find time for yourself.", "Thanks! I try my best.", "Anyway, how is the family?",
           "Everyone is doing well, thanks for asking.", "We should grab coffee soon.", "Definitely, let's plan it."]


def _facts(rng: random.Random, who: str, day: dt.date) -> list[dict[str, Any]]:
    """Candidate facts a speaker states in a session dated ``day``: text, question, gold, a degraded version."""
    wd = rng.choice(["Monday", "Tuesday", "Friday", "Saturday"])
    back = (day.weekday() - ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
                             "Sunday"].index(wd)) % 7 or 7
    went = day - dt.timedelta(days=back)
    event = rng.choice(["pottery workshop", "charity run", "jazz concert", "book fair"])
    n = rng.choice(sorted(_WORDS))
    animal = rng.choice(["kitten", "rescue dog", "goldfish"])
    city = rng.choice(["Lisbon", "Denver", "Osaka", "Tallinn"])
    signed = day - dt.timedelta(days=2)
    course = rng.choice(["salsa class", "evening coding course", "watercolour course"])
    pet = rng.choice(["Biscuit", "Pepper", "Waffles", "Mochi"])
    job, place = rng.choice([("nurse", "city hospital"), ("sous chef", "harbour bistro"),
                             ("data analyst", "regional bank"), ("librarian", "public library")])
    date = "{d.day} {d:%B} {d.year}"
    return [
        {"text": f"I finally went to the {event} last {wd}, it was amazing!", "question":
            f"When did {who} go to the {event}?", "gold": date.format(d=went), "fact":
            f"{who} went to the {event} on {date.format(d=went)}", "vague": f"{who} recently went to the {event}",
         "wrong": "Recently"},
        {"text": f"We adopted {_WORDS[n]} {animal}s from the shelter, the house is chaos now.", "question":
            f"How many {animal}s did {who} adopt?", "gold": [str(n), _WORDS[n]] if n % 2 else str(n), "fact":
            f"{who} adopted {n} {animal}s from the shelter", "vague": f"{who} adopted some {animal}s",
         "wrong": "One"},
        {"text": f"My brother just moved to {city} for his new job.", "question": f"Where did {who}'s brother move?",
         "gold": city, "fact": f"{who}'s brother moved to {city} for a new job",
         "vague": f"{who}'s brother moved away for a new job", "wrong": "Not mentioned"},
        {"text": f"I signed up for a {course} two days ago, so excited.", "question":
            f"When did {who} sign up for the {course}?", "gold": date.format(d=signed), "fact":
            f"{who} signed up for a {course} on {date.format(d=signed)}", "vague": f"{who} signed up for a {course}",
         "wrong": "Last week"},
        {"text": f"Our new puppy is called {pet}, he chews everything.", "question":
            f"What is the name of {who}'s puppy?", "gold": pet, "fact": f"{who} has a new puppy named {pet}",
         "vague": f"{who} has a new puppy", "wrong": "Buddy"},
        {"text": f"Big news, I start as a {job} at the {place} on Monday!", "question": f"What job did {who} get?",
         "gold": job, "fact": f"{who} got a job as a {job} at the {place}", "vague": f"{who} got a new job",
         "wrong": "Teacher"},
    ]


class _Run:
    """One traced run of an emulated MemBase system over one two-speaker conversation."""

    def __init__(self, system: str, rng: random.Random, user: str) -> None:
        self.system, self.rng, self.user = system, rng, user
        self.ops: dict[str, str] = {}
        self.annotations: list[dict[str, Any]] = []
        self.units: dict[str, dict[str, Any]] = {}
        self.n_units = 0

    # --- conversation ------------------------------------------------------------------------------

    def conversation(self) -> list[tuple[str, str, str, dt.date, dict[str, Any] | None]]:
        """(message id, speaker, text, session date, fact) per turn: three sessions, one or two facts each."""
        a, b = self.rng.choice(_PAIRS)
        start = dt.date(2023, self.rng.randint(1, 9), self.rng.randint(1, 20))
        turns = []
        order = self.rng.sample(range(6), 5)  # each kind of fact once per conversation: no two questions alike
        for s in range(1, 4):
            day = start + dt.timedelta(days=9 * (s - 1) + self.rng.randint(0, 3))
            chat = self.rng.sample(_FILLER, 6)
            facts = [order.pop() for _ in range(2 if s < 3 else 1)]
            for i, k in enumerate(facts):
                who = (a, b)[(s + i) % 2]
                chat.insert(1 + 3 * i, (who, _facts(self.rng, who, day)[k]))
            for t, item in enumerate(chat, start=1):
                who, fact = item if isinstance(item, tuple) else ((a, b)[t % 2 == 0], None)
                turns.append((f"{self.user}:D{s}:{t}", who, fact["text"] if fact else item, day, fact))
        return turns

    def message(self, mid: str, who: str, text: str, day: dt.date) -> Any:
        """A conversation message as MemBase records it (a JSON dict; the speaker's name under ``name``)."""
        from smartcomment import comment_variable

        stamp = f"{self.rng.randint(1, 11)}:{self.rng.randint(10, 59)} pm on {day.day} {day:%B}, {day.year}"
        content = f"Speaker {who} (role: user) says: {text}\nTimestamp: {stamp}"
        value = {"content": content, "name": who, "role": "user", "timestamp": stamp}
        return comment_variable(value, to_runtime=True, id_strategy=lambda _: mid, encoding_fn=_JSON,
                                decoding_fn=json.loads, category="message",
                                metadata={"timestamp": stamp, "speakers": who})

    def unit(self, value: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """A memory unit with its MemBase options (a registered dict identity)."""
        return dict(value), {"id_strategy": f"{self.system}-dict", "category": "memory_entry", "encoding_fn": _JSON,
                             "decoding_fn": json.loads}

    def new_unit(self, text_fields: dict[str, Any]) -> dict[str, Any]:
        """A fresh unit value with a uuid-like id."""
        self.n_units += 1
        value = {"id": f"{self.rng.getrandbits(32):08x}-{self.n_units:04d}", **text_fields}
        self.units[value["id"]] = value
        return value

    # --- questions ---------------------------------------------------------------------------------

    def ask(self, qid: str, fact: dict[str, Any], evidence: str, context: str, prediction: str,
            retrieve: Any, inputs: Any) -> None:
        """The search session (``retrieve(query)``) then question answering and judging."""
        from smartcomment import comment_op, comment_op_scope, comment_session, comment_variable

        with comment_session(category="memory_search"):
            query = comment_variable(fact["question"], to_runtime=True, variable_name="query",
                                     id_strategy=lambda _: qid, class_name="query", category="message & query",
                                     metadata={"question_type": "single-hop"})
            retrieve(query)
        with comment_session(category="memory_evaluation"):
            template = comment_variable("Answer from the memories.\n{context}\nQuestion: {question}", to_runtime=True,
                                        id_strategy=lambda _: "question-answering-prompt", encoding_fn=str,
                                        category="prompt")
            with comment_op_scope(op_name="question-answering", category="evaluation") as op:
                ctx = (context, {"class_name": "context", "category": "memory_context", "encoding_fn": str})
                comment_op(inputs=inputs(), outputs=[ctx], reuse_op=True)
                comment_op(inputs=[query, ctx, template], outputs=[
                    (prediction, {"class_name": "prediction", "category": "llm_response", "encoding_fn": str})],
                    reuse_op=True)
            self.ops[f"qa:{qid}"] = op.op_id
            gold = fact["gold"]
            with comment_op_scope(op_name="llm-judge", category="evaluation"):
                comment_op(inputs=[query, (prediction, {"class_name": "prediction", "category": "llm_response",
                                                        "encoding_fn": str}),
                                   (gold, {"class_name": "golden_answers", "category": "golden_answers",
                                           "encoding_fn": _JSON})],
                           outputs=[("WRONG", {"class_name": "judge_response", "category": "llm_response",
                                               "encoding_fn": str})], reuse_op=True)
        self.pending = {"query_id": f"query:{qid}@1", "query": fact["question"], "golden_answers": gold,
                        "prediction": prediction, "source_evidence_ids": [f"{evidence}@1"]}

    def label(self, error_type: str, op_id: str) -> None:
        """Annotate the last question."""
        self.annotations.append({**self.pending, "final_error_type": error_type, "final_op_id": op_id})

    def retrieval(self, name: str, uids: list[str], category: str = "retrieval") -> Any:
        """A retrieval op reading the latest versions of ``uids`` from the query (MemBase: query → unit)."""
        def run(query: Any) -> None:
            from smartcomment import comment_op, comment_op_scope

            with comment_op_scope(op_name=name, category=category, metadata={"top_k": len(uids)}) as op:
                for uid in uids:
                    comment_op(inputs=[query], outputs=[self.unit(self.units[uid])], reuse_op=True)
            self.ops["retrieve"] = op.op_id
        return run

    def refs(self, uids: list[str]) -> Any:
        """The QA op's identity-only references to units."""
        return lambda: [({"id": u}, {"id_strategy": lambda v: v["id"], "identity_only": True}) for u in uids]


def _wrong(run: _Run, fact: dict[str, Any]) -> str:
    return fact["wrong"]


def _others(run: _Run, holder: str | None, k: int = 2) -> list[str]:
    pool = [u for u in run.units if u != holder]
    return run.rng.sample(pool, min(k, len(pool)))


# --- NaiveRAG ----------------------------------------------------------------------------------------


def _rag(run: _Run) -> None:
    """Buffered documents stored as units; one retrieval; a trimmed buffer loses a turn before it is emitted."""
    from smartcomment import comment_mutation, comment_op, comment_op_scope, comment_session, comment_variable

    turns = run.conversation()
    buffer: dict[str, Any] = {"message_buffer": [], "buffer_total_tokens": 0}
    held: dict[str, str] = {}  # message id → the first unit holding it
    holders: dict[str, set[str]] = {}  # message id → every unit holding it (documents overlap)
    lost: dict[str, str] = {}  # message id → op that trimmed it before it was emitted
    in_buffer: list[str] = []
    for n, (mid, who, text, day, _) in enumerate(turns):
        with comment_session(category="memory_construction"):
            raw = run.message(mid, who, text, day)
            snapshot = comment_variable(dict(buffer), to_runtime=True, id_strategy=lambda _: "message-buffer",
                                        encoding_fn=_JSON, decoding_fn=json.loads, category="message_buffer")
            trim = bool(in_buffer) and any(turns[k][4] for k in range(n) if turns[k][0] in in_buffer
                                           and turns[k][0] not in held) and run.rng.random() < 0.15
            with comment_op_scope(op_name="memory_system.message_buffer_update", category="update",
                                  metadata={"max_tokens": 120, "num_overlap_msgs": 1}) as op:
                with comment_mutation(target=buffer, inputs=[raw], id_strategy=lambda _: "message-buffer",
                                      encoding_fn=_JSON, decoding_fn=json.loads, category="message_buffer",
                                      mutation_category="update", reuse_op=True):
                    if trim:
                        lost.update({m: op.op_id for m in in_buffer if m not in held})
                        in_buffer.clear()
                        buffer["message_buffer"] = []
                    content = raw.value["content"] if hasattr(raw, "value") else text
                    doc = None
                    if len(in_buffer) >= 3:
                        doc = "\n\n".join([*buffer["message_buffer"], content])
                        emitted = [*in_buffer, mid]
                        buffer["message_buffer"], in_buffer[:] = [content], [mid]
                    else:
                        buffer["message_buffer"] = [*buffer["message_buffer"], content]
                        in_buffer.append(mid)
                    buffer["buffer_total_tokens"] = sum(len(m.split()) for m in buffer["message_buffer"])
                if doc is not None:
                    rdoc = comment_variable(doc, to_runtime=True, class_name="temporary_variable",
                                            category="temporary_variable")
                    comment_op(inputs=[raw, snapshot], outputs=[rdoc], category="extraction", reuse_op=True)
            if doc is not None:
                unit = run.new_unit({"content": doc})
                comment_op(inputs=[rdoc], outputs=[run.unit(unit)], op_name="memory_system.add", category="update")
                for m in emitted:
                    held.setdefault(m, unit["id"])
                    holders.setdefault(m, set()).add(unit["id"])
    if in_buffer:
        with comment_session(category="memory_construction"):
            rest = comment_variable(dict(buffer), to_runtime=True, id_strategy=lambda _: "message-buffer",
                                    encoding_fn=_JSON, decoding_fn=json.loads, category="message_buffer")
            with comment_op_scope(op_name="memory_system.finalize_memory_unit", category="extraction"):
                rdoc = comment_variable("\n\n".join(buffer["message_buffer"]), to_runtime=True,
                                        class_name="temporary_variable", category="temporary_variable")
                comment_op(inputs=[rest], outputs=[rdoc], reuse_op=True)
            unit = run.new_unit({"content": "\n\n".join(buffer["message_buffer"])})
            comment_op(inputs=[rdoc], outputs=[run.unit(unit)], op_name="memory_system.add", category="update")
            for m in in_buffer:
                held.setdefault(m, unit["id"])
                holders.setdefault(m, set()).add(unit["id"])
    for q, (mid, _, _, _, fact) in enumerate(t for t in turns if t[4]):
        holder = held.get(mid)
        fault = "trim" if mid in lost else run.rng.choice(["miss", "miss", "response"])
        others = [u for u in run.units if u not in holders.get(mid, ())]
        fault = "response" if fault == "miss" and not others else fault
        uids = run.rng.sample(others, min(3, len(others))) if fault != "response" else [holder, *_others(run, holder)]
        context = "\n\n".join(run.units[u]["content"] for u in uids)
        run.ask(f"{run.user}-q{q}", fact, mid, context, _wrong(run, fact),
                run.retrieval("memory_system.retrieve", uids), run.refs(uids))
        if fault == "trim":
            run.label("UpdateError", lost[mid])
        else:
            run.label("RetrievalError" if fault == "miss" else "ResponseError",
                      run.ops["retrieve"] if fault == "miss" else run.ops[f"qa:{run.user}-q{q}"])


# --- Long-Context ------------------------------------------------------------------------------------


def _long_context(run: _Run) -> None:
    """One memory unit holding the history; one update trims the oldest messages past the window."""
    from smartcomment import comment_mutation, comment_op, comment_op_scope, comment_session

    turns = run.conversation()
    state: dict[str, Any] = {"history": []}
    cut = run.rng.randint(len(turns) // 2, 2 * len(turns) // 3)
    keep = run.rng.randint(4, 7)
    lost: dict[str, str] = {}
    kept: list[str] = []
    for n, (mid, who, text, day, _) in enumerate(turns):
        with comment_session(category="memory_construction"):
            raw = run.message(mid, who, text, day)
            with comment_op_scope(op_name="memory_system.memory_update", category="update",
                                  metadata={"context_window": 2048}) as op:
                with comment_mutation(target=state, inputs=[raw], category="memory_entry",
                                      id_strategy=lambda _: "memory-unit",
                                      encoding_fn=lambda v: "\n\n".join(v["history"]), mutation_category="update",
                                      reuse_op=True):
                    state["history"] = [*state["history"], raw.value["content"]]
                    kept.append(mid)
                    if n == cut:
                        lost.update({m: op.op_id for m in kept[:-keep]})
                        state["history"], kept[:] = state["history"][-keep:], kept[-keep:]
    history = "\n\n".join(state["history"])
    context = ("The following content enclosed in <long_context_memory> tags is the user's historical interaction "
               f"trajectory so far:\n<long_context_memory>\n{history}\n</long_context_memory>")
    for q, (mid, _, _, _, fact) in enumerate(t for t in turns if t[4]):
        def retrieve(query: Any) -> None:
            with comment_op_scope(op_name="memory_system.retrieve", category="retrieval", metadata={"top_k": 1}):
                comment_op(inputs=[query], outputs=[(history, {"id_strategy": lambda _: "memory-unit",
                                                               "encoding_fn": lambda s: s,
                                                               "category": "memory_entry"})], reuse_op=True)
        run.ask(f"{run.user}-q{q}", fact, mid, context, _wrong(run, fact), retrieve,
                lambda: [({"id": "memory-unit"}, {"id_strategy": lambda v: v["id"], "identity_only": True})])
        if mid in lost:
            run.label("UpdateError", lost[mid])
        else:
            run.label("ResponseError", run.ops[f"qa:{run.user}-q{q}"])


# --- EverMemOS ---------------------------------------------------------------------------------------


def _evermemos(run: _Run) -> None:
    """Boundary detection (memcells or no-split markers), episode extraction, hybrid retrieval with a rerank."""
    from smartcomment import (
        comment_link,
        comment_mutation,
        comment_op,
        comment_op_scope,
        comment_session,
        comment_variable,
    )

    turns = run.conversation()
    buffer: dict[str, Any] = {"messages": []}
    pending: list[tuple[str, str, str, dt.date, Any]] = []
    holder: dict[str, str] = {}
    extracted_by: dict[str, str] = {}
    vague: set[str] = set()
    for n, turn in enumerate(turns):
        mid, who, text, day, fact = turn
        with comment_session(category="memory_construction"):
            raw = run.message(mid, who, text, day)
            with comment_op_scope(op_name="evermemos.boundary_detection", category="boundary_detection"):
                with comment_mutation(target=buffer, inputs=[raw], id_strategy=lambda _: "message-buffer",
                                      encoding_fn=_JSON, decoding_fn=json.loads, category="split_message_buffer",
                                      mutation_category="update", reuse_op=True):
                    buffer["messages"] = [*buffer["messages"], raw.value]
                pending.append(turn)
                snapshot = comment_variable(dict(buffer), to_runtime=True, id_strategy=lambda _: "message-buffer",
                                            encoding_fn=_JSON, decoding_fn=json.loads,
                                            category="split_message_buffer")
                split = len(pending) >= 4 and (n + 1 == len(turns) or turns[n + 1][3] != day
                                               or run.rng.random() < 0.4) or n + 1 == len(turns)
                if not split:
                    marker = comment_variable("NO_SPLIT", to_runtime=True, class_name="no_split_marker",
                                              category="marker")
                    comment_op(inputs=[snapshot], outputs=[marker], reuse_op=True)
                    continue
                stamp = f"{day.isoformat()}T18:00:00"
                memcell = comment_variable({"original_data": buffer["messages"], "timestamp": stamp},
                                           to_runtime=True, variable_name="memcell", class_name="temporary_variable",
                                           category="temporary_variable", encoding_fn=_JSON, decoding_fn=json.loads)
                comment_op(inputs=[snapshot], outputs=[memcell], reuse_op=True)
                with comment_mutation(target=buffer, inputs=[], id_strategy=lambda _: "message-buffer",
                                      encoding_fn=_JSON, decoding_fn=json.loads, category="split_message_buffer",
                                      mutation_category="update", reuse_op=True):
                    buffer["messages"] = []
            people = sorted({t[1] for t in pending})
            lines = [f"{' and '.join(people)} caught up on {day.day} {day:%B} {day.year}."]
            for t in pending:
                if t[4]:
                    bad = run.rng.random() < 0.4
                    lines.append(t[4]["vague" if bad else "fact"] + ".")
                    vague.update({t[0]} if bad else set())
            prompt = comment_variable("Summarise the memcell as an episode; resolve relative dates.", to_runtime=True,
                                      id_strategy=lambda _: "episode-extraction-prompt-template", encoding_fn=str,
                                      category="prompt")
            episode = {"subject": f"{' and '.join(people)} catch up", "summary": lines[0], "episode": " ".join(lines)}
            with comment_op_scope(op_name="evermemos.episode_extraction", category="extraction") as ex:
                response = comment_variable("```json\n" + _JSON(episode) + "\n```", to_runtime=True,
                                            class_name="raw_episode_extraction_response", category="llm_response",
                                            encoding_fn=str)
                comment_op(inputs=[memcell, prompt], outputs=[response], reuse_op=True)
                parsed = comment_variable(episode, to_runtime=True, variable_name="episode_memory",
                                          class_name="episode_memory", category="llm_response", encoding_fn=_JSON,
                                          decoding_fn=json.loads)
                comment_link(source=response, target=parsed)
            unit = run.new_unit({**episode, "timestamp": stamp})
            comment_op(inputs=[parsed], outputs=[run.unit(unit)], op_name="memory_system.add", category="update")
            holder.update({t[0]: unit["id"] for t in pending})
            extracted_by.update({t[0]: ex.op_id for t in pending})
            pending = []
    for q, (mid, _, _, _, fact) in enumerate(t for t in turns if t[4]):
        unit = holder[mid]
        fault = "vague" if mid in vague else run.rng.choice(["rerank", "response"])
        sparse = [unit, *_others(run, unit)]
        final = _others(run, unit) if fault == "rerank" else [unit, *_others(run, unit, 1)]
        dense = _others(run, unit, 3) if fault == "rerank" else final

        def retrieve(query: Any, sparse=sparse, dense=dense, final=final) -> None:
            with comment_session(category="memory_search"):
                lists = {}
                for name, kind, uids in (("bm25", "sparse", sparse), ("embedding", "dense", dense)):
                    with comment_op_scope(op_name=f"memory_system.{name}_retrieval", category="retrieval"):
                        lists[kind] = comment_variable(
                            [{"id": u, "score": round(run.rng.uniform(0.2, 0.9), 3), "episode": run.units[u]["episode"]}
                             for u in uids], to_runtime=True, class_name=f"{kind}_retrieval_results",
                            category=f"{kind}_retrieval_results", encoding_fn=_JSON,
                            id_strategy=lambda r: ", ".join(x["id"] for x in r))
                        comment_op(inputs=[query, *[run.unit(run.units[u]) for u in uids]], outputs=[lists[kind]],
                                   reuse_op=True)
                with comment_op_scope(op_name="memory_system.hybrid_retrieval", category="retrieval",
                                      metadata={"rerank": True}) as op:
                    hybrid = comment_variable([{"id": u, "episode": run.units[u]["episode"]} for u in final],
                                              to_runtime=True, class_name="hybrid_retrieval_results",
                                              category="hybrid_retrieval_results", encoding_fn=_JSON,
                                              id_strategy=lambda r: "hybrid: " + ", ".join(x["id"] for x in r))
                    comment_op(inputs=[query, lists["sparse"], lists["dense"]], outputs=[hybrid], reuse_op=True)
                run.ops["retrieve"] = op.op_id
        context = "\n\n".join(f"[{run.units[u]['timestamp']}] {run.units[u]['episode']}" for u in final)
        run.ask(f"{run.user}-q{q}", fact, mid, context, _wrong(run, fact), retrieve, run.refs(final))
        if fault == "vague":
            run.label("ExtractionError", extracted_by[mid])
        else:
            run.label("RetrievalError" if fault == "rerank" else "ResponseError",
                      run.ops["retrieve"] if fault == "rerank" else run.ops[f"qa:{run.user}-q{q}"])


# --- Mem0-ish ----------------------------------------------------------------------------------------


def _mem0(run: _Run) -> None:
    """Per session: fact extraction, then update decisions (ADD / UPDATE / DELETE); a vector-store search."""
    from smartcomment import (
        comment_link,
        comment_mutation,
        comment_op,
        comment_op_scope,
        comment_session,
        comment_variable,
    )

    turns = run.conversation()
    holder: dict[str, str] = {}
    label: dict[str, tuple[str, str]] = {}
    sessions = sorted({t[0].rsplit(":", 1)[0] for t in turns}, key=lambda s: int(s.rsplit("D", 1)[1]))
    for session in sessions:
        part = [t for t in turns if t[0].rsplit(":", 1)[0] == session]
        day = part[0][3]
        with comment_session(category="memory_construction"):
            messages = [run.message(mid, who, text, d) for mid, who, text, d, _ in part]
            facts, sources = [], []
            with comment_op_scope(op_name="memory_system.extract_facts", category="extraction") as ex:
                for mid, _, _, _, fact in part:
                    if fact and run.rng.random() < 0.3:
                        label[mid] = ("ExtractionError", ex.op_id)
                    elif fact:
                        facts.append(f"{fact['fact']} (mentioned {day.day} {day:%B} {day.year})")
                        sources.append(mid)
                raw = comment_variable(_JSON({"facts": facts}), to_runtime=True, category="llm_response",
                                       class_name="raw_fact_extraction_response", encoding_fn=str)
                comment_op(inputs=messages, outputs=[raw], reuse_op=True)
                parsed = comment_variable(list(facts), to_runtime=True, class_name="extracted_facts",
                                          category="llm_response", encoding_fn=_JSON)
                comment_link(source=raw, target=parsed)
            with comment_op_scope(op_name="memory_system.update_memory_decision", category="update") as up:
                live = [m for m, u in holder.items() if u in run.units and m not in label]
                victim = run.rng.choice(live) if live and run.rng.random() < 0.6 else None
                for i, (text, mid) in enumerate(zip(facts, sources, strict=True)):
                    if victim is not None and i == 0:
                        uid = holder[victim]
                        if run.rng.random() < 0.5:
                            marker = comment_variable("DELETED", to_runtime=True, class_name="delete_marker",
                                                      category="marker")
                            comment_link(source=run.unit(run.units[uid]), target=marker)
                            del run.units[uid]
                            label[victim] = ("DeletionError", up.op_id)
                        else:
                            snap = dict(run.units[uid])
                            with comment_mutation(target=snap, inputs=[parsed], id_strategy=f"{run.system}-dict",
                                                  encoding_fn=_JSON, decoding_fn=json.loads, category="memory_entry",
                                                  mutation_category="update", reuse_op=True):
                                snap["memory"], snap["timestamp"] = text, day.isoformat()
                            run.units[uid] = snap
                            label[victim] = ("UpdateError", up.op_id)
                            holder[mid] = uid
                            continue
                    unit = run.new_unit({"memory": text, "timestamp": day.isoformat()})
                    comment_op(inputs=[parsed], outputs=[run.unit(unit)], reuse_op=True)
                    holder[mid] = unit["id"]
    for q, (mid, _, _, _, fact) in enumerate(t for t in turns if t[4]):
        unit = holder.get(mid) if mid not in label else None
        fault = run.rng.choice(["miss", "response"]) if mid not in label else None
        fault = "response" if fault == "miss" and not _others(run, unit) else fault
        uids = [unit, *_others(run, unit)] if fault == "response" else _others(run, unit, 3)
        context = "\n".join(f"- {run.units[u]['memory']} ({run.units[u]['timestamp']})" for u in uids)
        run.ask(f"{run.user}-q{q}", fact, mid, context, _wrong(run, fact),
                run.retrieval("memory_system.search_vector_store", uids), run.refs(uids))
        if fault is None:
            run.label(*label[mid])
        else:
            run.label("RetrievalError" if fault == "miss" else "ResponseError",
                      run.ops["retrieve"] if fault == "miss" else run.ops[f"qa:{run.user}-q{q}"])


_BUILD = {"rag": _rag, "long_context": _long_context, "evermemos": _evermemos, "mem0": _mem0}


def graph(system: str, seed: int) -> dict[str, Any]:
    """One emulated MemBase run of ``system`` (seeded), exported by smartcomment, with its annotations."""
    from smartcomment import IdentityRegistry, comment_graph

    IdentityRegistry.register(f"{system}-dict", lambda v: v["id"], exist_ok=True)
    rng = random.Random(f"{system}:{seed}")
    user = f"user-{seed}"
    run = _Run(system, rng, user)
    with comment_graph(graph_id=f"{LAYER[system]}-{user}", user_id=user,
                       metadata={"layer_type": LAYER[system]}) as g:
        _BUILD[system](run)
    doc = g.export_graph()
    if run.annotations and rng.random() < 0.5:  # a non-memory label, spelled as annotators do
        judge = next(o["op_id"] for o in doc["data"]["operations"] if o["op_name"] == "llm-judge")
        run.annotations[-1].update(final_error_type=rng.choice(["LLMJudgeError", "Judge Error", "annotation_error"]),
                                   final_op_id=judge)
    doc["data"]["annotations"] = run.annotations
    return doc


def write(out: str | Path, seeds: tuple[int, ...]) -> list[Path]:
    """Write one graph per (system, seed) as ``out/<split>/<graph_id>.json``."""
    paths = []
    for system in SPLITS:
        for seed in seeds:
            doc = graph(system, seed)
            path = Path(out) / system / f"{doc['graph_id']}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(doc, ensure_ascii=False, indent=1), encoding="utf-8")
            paths.append(path)
    return paths


if __name__ == "__main__":
    half = sys.argv[2] if len(sys.argv) > 2 else "tuned"
    written = write(sys.argv[1], TUNED if half == "tuned" else HELD_OUT)
    print(f"{len(written)} graphs ({half}) → {sys.argv[1]}")
