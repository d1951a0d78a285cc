"""MemTraceBench-format fixtures, built with the smartcomment library itself (never hand-written JSON).

Each graph is traced the way MemBase traces the four memory systems for MemTraceBench (op names,
categories, class names and identity strategies as in MemBase's published tracing code): messages of
category ``message``, the question as a ``query`` of category ``message & query`` with its evidence names
in its metadata, memory units of category ``memory_entry``, multi-hop operations (Mem0's update decision:
prompt → raw decision → actions → unit; question answering: units → context → prediction), updates as
``comment_mutation`` (unit@1 → unit@2), deletes as an edge to the ``DELETED`` marker, retrievals as edges
from the query into *existing* unit versions, and an ``llm-judge`` op per question. Then
``ExecNetwork.export_graph()`` and the benchmark's annotations under ``data.annotations``.

The memory systems' behaviour is scripted (small hand-made conversations whose faults are put in on
purpose: a fact not extracted, an update that overwrites, a wrong delete, a retrieval or a rerank that
misses, an answer that ignores its context, a long-context window that trims the evidence); every
annotation labels the fault the way MemTrace's definitions do, and all graphs but one also carry a
non-memory label (``LLMJudgeError``), which the official loader drops. These are our fixtures, not
MemTraceBench's data.

    python -m tests.memtracebench_fixtures OUT_DIR     # writes OUT_DIR/<split>/<graph>.json
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

SPLITS = ("rag", "mem0", "evermemos", "long_context")
_JSON = partial(json.dumps, ensure_ascii=False, indent=4, sort_keys=True)


class _Trace:
    """One traced run of a scripted memory system: messages, ops, questions and their annotations."""

    def __init__(self, system: str, name: str, user: str) -> None:
        self.system, self.name, self.user = system, name, user
        self.ops: dict[str, str] = {}
        self.units: dict[str, dict[str, Any]] = {}
        self.annotations: list[dict[str, Any]] = []
        self.messages: dict[str, Any] = {}

    # --- construction ----------------------------------------------------------------------------

    def message(self, dia: str, speaker: str, role: str, text: str, date: str) -> Any:
        """A conversation turn, as a message variable named ``<user>:<dia_id>``."""
        from smartcomment import comment_variable

        rv = comment_variable(f"{speaker}: {text}", to_runtime=True, id_strategy=lambda _: f"{self.user}:{dia}",
                              encoding_fn=str, category="message",
                              metadata={"speaker": speaker, "role": role, "timestamp": date},
                              comment="A message of the conversation.")
        self.messages[dia] = rv
        return rv

    def unit(self, uid: str, text: str, date: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """A memory unit value and its comment options (MemBase's mem0-dict identity)."""
        value = {"id": uid, "memory": text, "timestamp": date}
        self.units[uid] = value
        return value, {"id_strategy": lambda v: v["id"], "category": "memory_entry", "encoding_fn": _JSON,
                       "decoding_fn": json.loads, "comment": "A memory unit in the memory system."}

    def prompt(self, name: str, text: str) -> Any:
        """A prompt variable with a name-based identity."""
        from smartcomment import comment_variable

        return comment_variable(text, to_runtime=True, id_strategy=lambda _: name, encoding_fn=str,
                                category="prompt")

    def update_unit(self, uid: str, text: str, date: str, inputs: list[Any]) -> None:
        """An in-place update of a unit (a new version), inside the active op."""
        from smartcomment import comment_mutation

        snapshot = dict(self.units[uid])
        with comment_mutation(target=snapshot, inputs=inputs, id_strategy=lambda v: v["id"], encoding_fn=_JSON,
                              decoding_fn=json.loads, category="memory_entry", mutation_category="llm_response",
                              mutation_comment=f"The memory unit '{uid}' is updated.", reuse_op=True):
            snapshot["memory"], snapshot["timestamp"] = text, date
        self.units[uid] = snapshot

    def delete_unit(self, uid: str) -> None:
        """A delete: an edge from the unit's latest version to the DELETED marker, inside the active op."""
        from smartcomment import comment_link, comment_variable

        marker = comment_variable("DELETED", to_runtime=True, class_name="delete_marker", category="marker",
                                  comment="It marks the memory unit is deleted successfully.")
        value, options = self.unit(uid, self.units[uid]["memory"], self.units[uid]["timestamp"])
        comment_link(source=(value, options), target=marker, comment=f"The memory unit '{uid}' is deleted.")
        del self.units[uid]

    # --- questions -------------------------------------------------------------------------------

    def ask(self, qid: str, question: str, gold: str, evidence: list[str], prediction: str,
            retrieve: Callable[[Any], list[str]], **metadata: Any) -> None:
        """Ask one question: retrieval (``retrieve`` records it and returns unit ids), answering, judging."""
        from smartcomment import comment_op, comment_op_scope, comment_session, comment_variable

        with comment_session(category="memory_search", comment="Search the memory for a question."):
            query = comment_variable(question, to_runtime=True, id_strategy=lambda _: qid, class_name="query",
                                     category="message & query",
                                     metadata={"evidence": [f"{self.user}:{d}" for d in evidence], **metadata})
            retrieved = retrieve(query)
        with comment_session(category="memory_evaluation", comment="Answer and judge."):
            template = comment_variable("Answer the question from the memories.\n$context\nQ: $question",
                                        to_runtime=True, id_strategy=lambda _: "question-answering-prompt",
                                        encoding_fn=str, category="prompt")
            context_text = "\n\n".join(f"### Memory {i + 1}:\n{self.units_text(u)}" for i, u in enumerate(retrieved))
            with comment_op_scope(op_name="question-answering", category="evaluation",
                                  comment="The QA model answers from the retrieved context.") as op:
                refs = [({"id": u}, {"id_strategy": lambda v: v["id"], "identity_only": True}) for u in retrieved]
                context = (context_text, {"class_name": "context", "category": "memory_context", "encoding_fn": str})
                comment_op(inputs=refs, outputs=[context], reuse_op=True)
                comment_op(inputs=[query, context, template],
                           outputs=[(prediction, {"class_name": "prediction", "category": "llm_response",
                                                  "encoding_fn": str})], reuse_op=True)
            self.ops[f"qa:{qid}"] = op.op_id
            with comment_op_scope(op_name="llm-judge", category="evaluation"):
                comment_op(inputs=[query, (prediction, {"class_name": "prediction", "category": "llm_response",
                                                        "encoding_fn": str}),
                                   (gold, {"class_name": "golden_answers", "category": "golden_answers",
                                           "encoding_fn": str})],
                           outputs=[("The prediction does not match the golden answer.",
                                     {"class_name": "judge_response", "category": "llm_response", "encoding_fn": str}),
                                    ("0.0", {"class_name": "judge_score", "category": "llm_response",
                                             "encoding_fn": str})], reuse_op=True)
        self._pending = {"query_id": f"query:{qid}@1", "query": question, "golden_answers": gold,
                         "prediction": prediction, "source_evidence_ids": [f"{self.user}:{d}@1" for d in evidence]}

    def units_text(self, uid: str) -> str:
        """The text of a unit (or of a retrieved item that is not a unit)."""
        return self.units[uid]["memory"] if uid in self.units else uid

    def label(self, error_type: str, op: str) -> None:
        """Annotate the last question: its error type and the op (by label) to blame."""
        self.annotations.append({**self._pending, "final_error_type": error_type, "final_op_id": self.ops[op]})

    def search(self, qid: str, uids: list[str], op_name: str = "memory_system.search_vector_store",
               label: str = "search") -> Callable[[Any], list[str]]:
        """A retrieval op reading the query and the latest versions of ``uids`` (no new versions)."""
        def run(query: Any) -> list[str]:
            from smartcomment import comment_op, comment_op_scope

            with comment_op_scope(op_name=op_name, category="retrieval", metadata={"top_k": len(uids)}) as op:
                for uid in uids:
                    comment_op(inputs=[query], outputs=[self.unit(uid, self.units[uid]["memory"],
                                                                   self.units[uid]["timestamp"])], reuse_op=True)
            self.ops[f"{label}:{qid}"] = op.op_id
            return uids
        return run


def _graph(system: str, name: str, user: str, build: Callable[[_Trace], None]) -> dict[str, Any]:
    """Trace one scripted run with smartcomment and export it with its annotations."""
    from smartcomment import IdentityRegistry, comment_graph

    IdentityRegistry.register("mem0-dict", lambda v: v["id"], exist_ok=True)
    run = _Trace(system, name, user)
    with comment_graph(graph_id=f"{system}-{name}", user_id=user,
                       metadata={"memtracebench_graph_filename": f"{name}.json", "memory_system": system}) as graph:
        build(run)
    doc = graph.export_graph()
    doc["data"]["annotations"] = run.annotations
    return doc


# --- Mem0 -----------------------------------------------------------------------------------------


def _mem0_session(run: _Trace, index: int, date: str, turns: list[tuple[str, str, str]], facts: list[str],
                  actions: list[tuple[str, str, str]]) -> None:
    """One Mem0 ``add``: extract facts (multi-hop), search similar units, decide and apply the update."""
    from smartcomment import comment_link, comment_op, comment_op_scope, comment_session, comment_variable

    with comment_session(category="memory_construction", session_name=f"session {index}"):
        messages = [run.message(f"D{index}:{n}", speaker, role, text, date)
                    for n, (speaker, role, text) in enumerate(turns, start=1)]
        system_prompt = run.prompt("fact-extraction-system-prompt", "Extract the facts about the user.")
        with comment_op_scope(op_name="memory_system.extract_facts", category="extraction") as op:
            raw = comment_variable(_JSON({"facts": facts}), to_runtime=True, category="llm_response",
                                   class_name="raw_fact_extraction_response", id_strategy=lambda _: f"S{index}")
            for source in [*messages, system_prompt]:
                comment_link(source=source, target=raw)
            extracted = comment_variable(facts, to_runtime=True, id_strategy=lambda _: f"S{index}",
                                         class_name="extracted_facts", category="llm_response", encoding_fn=_JSON)
            comment_link(source=raw, target=extracted)
        run.ops[f"extract:{index}"] = op.op_id
        existing = [dict(u) for u in run.units.values()]
        with comment_op_scope(op_name="memory_system.search_similar_memories", category="retrieval"):
            old = comment_variable(existing, to_runtime=True, class_name="existing_memories", category="llm_response",
                                   encoding_fn=_JSON, id_strategy=lambda _: f"S{index}")
            comment_op(inputs=[extracted, *[run.unit(u["id"], u["memory"], u["timestamp"]) for u in existing]],
                       outputs=[old], reuse_op=True)
        update_prompt = run.prompt("memory-update-decision-prompt", "Decide ADD, UPDATE, DELETE or NONE.")
        with comment_op_scope(op_name="memory_system.update_memory_decision", category="update") as op:
            task = comment_variable(f"Facts: {facts}\nMemories: {existing}", to_runtime=True, category="prompt",
                                    class_name="memory_update_task_instruction", id_strategy=lambda _: f"S{index}",
                                    encoding_fn=str)
            for source in (extracted, old, update_prompt):
                comment_link(source=source, target=task)
            decision = {"memory": [{"id": uid, "event": event, "text": text} for event, uid, text in actions]}
            raw = comment_variable(_JSON(decision), to_runtime=True, class_name="raw_memory_update_decision",
                                   category="llm_response", id_strategy=lambda _: f"S{index}", encoding_fn=str)
            comment_link(source=task, target=raw)
            act = comment_variable(decision, to_runtime=True, class_name="update_action", category="llm_response",
                                   id_strategy=lambda _: f"S{index}", encoding_fn=_JSON)
            comment_link(source=raw, target=act)
            for event, uid, text in actions:
                if event == "ADD":
                    comment_link(source=act, target=run.unit(uid, text, date))
                elif event == "UPDATE":
                    run.update_unit(uid, text, date, [act])
                else:
                    run.delete_unit(uid)
        run.ops[f"update:{index}"] = op.op_id


def _mem0_alice(run: _Trace) -> None:
    _mem0_session(run, 1, "2023-05-08", [
        ("Alice", "user", "I adopted a beagle puppy yesterday, his name is Max!"),
        ("Bob", "assistant", "Congrats! I just started a new job as a nurse at Mercy Hospital."),
        ("Alice", "user", "I teach math at Lincoln School, and I play tennis every Sunday."),
    ], ["Alice adopted a beagle puppy named Max on 7 May 2023", "Alice teaches math at Lincoln School",
        "Alice plays tennis every Sunday"], [
        ("ADD", "m1", "Alice adopted a beagle puppy named Max on 7 May 2023"),
        ("ADD", "m2", "Alice teaches math at Lincoln School"),
        ("ADD", "m3", "Alice plays tennis every Sunday"),
    ])
    _mem0_session(run, 2, "2023-06-12", [
        ("Alice", "user", "My sister Carol looks after my dog on weekends now."),
        ("Bob", "assistant", "Nice. I moved to Denver in March, by the way."),
    ], ["Alice's sister Carol looks after Alice's dog on weekends", "Bob moved to Denver in March 2023"], [
        ("UPDATE", "m1", "Alice's sister Carol looks after Alice's dog on weekends"),
        ("ADD", "m4", "Bob moved to Denver in March 2023"),
    ])
    _mem0_session(run, 3, "2023-07-02", [
        ("Bob", "assistant", "I no longer rent my old apartment, I bought a house."),
        ("Alice", "user", "Carol and I walked Max in the park on Saturday."),
    ], ["Bob no longer rents his old apartment", "Bob bought a house"], [
        ("DELETE", "m4", ""),
        ("ADD", "m5", "Bob bought a house"),
    ])
    run.ask("conv-a_q1", "What is the name of Alice's dog?", "Max", ["D1:1"], "The name is not mentioned.",
            run.search("conv-a_q1", ["m1", "m2"]), category="single-hop")
    run.label("UpdateError", "update:2")
    run.ask("conv-a_q2", "What is Bob's job?", "nurse", ["D1:2"], "Bob works at Lincoln School.",
            run.search("conv-a_q2", ["m2", "m5"]), category="single-hop")
    run.label("ExtractionError", "extract:1")
    run.ask("conv-a_q3", "Where did Bob move in March 2023?", "Denver", ["D2:2"], "Bob bought a house.",
            run.search("conv-a_q3", ["m5"]), category="single-hop")
    run.label("DeletionError", "update:3")
    run.ask("conv-a_q4", "Where does Alice teach math?", "Lincoln School", ["D1:3"], "Alice teaches math.",
            run.search("conv-a_q4", ["m2", "m3"]), category="single-hop")
    run.label("ResponseError", "qa:conv-a_q4")
    run.ask("conv-a_q5", "What sport does Alice play every Sunday?", "tennis", ["D1:3"], "Alice plays tennis.",
            run.search("conv-a_q5", ["m3"]), category="single-hop")
    run.label("LLMJudgeError", "qa:conv-a_q5")


def _mem0_dana(run: _Trace) -> None:
    _mem0_session(run, 1, "2023-03-01", [
        ("Dana", "user", "I'm training for the Boston marathon in April."),
        ("Eli", "assistant", "Cool, I got a cockatiel named Kiwi last week."),
    ], ["Dana is training for the Boston marathon in April 2023", "Eli got a cockatiel named Kiwi"], [
        ("ADD", "n1", "Dana is training for the Boston marathon in April 2023"),
        ("ADD", "n2", "Eli got a cockatiel named Kiwi in February 2023"),
    ])
    _mem0_session(run, 2, "2023-04-20", [
        ("Dana", "user", "I finished the Boston marathon in 3 hours 40 minutes!"),
        ("Dana", "user", "Next I want to learn pottery at the Clay Studio."),
    ], ["Dana finished the Boston marathon in 3 hours 40 minutes", "Dana wants to learn pottery"], [
        ("UPDATE", "n1", "Dana finished the Boston marathon in 3 hours 40 minutes"),
        ("ADD", "n3", "Dana wants to learn pottery at the Clay Studio"),
    ])
    run.ask("conv-b_q1", "What is the name of Eli's bird?", "Kiwi", ["D1:2"], "Eli has a parrot.",
            run.search("conv-b_q1", ["n1", "n3"]), category="single-hop")
    run.label("RetrievalError", "search:conv-b_q1")
    run.ask("conv-b_q2", "How long did Dana take to finish the Boston marathon?", "3 hours 40 minutes", ["D2:1"],
            "Dana finished in April.", run.search("conv-b_q2", ["n1"]), category="single-hop")
    run.label("ResponseError", "qa:conv-b_q2")
    run.ask("conv-b_q3", "Where does Dana want to learn pottery?", "the Clay Studio", ["D2:2"], "At a studio.",
            run.search("conv-b_q3", ["n3"]), category="single-hop")
    run.label("LLMJudgeError", "qa:conv-b_q3")


# --- RAG ------------------------------------------------------------------------------------------


def _rag(run: _Trace, sessions: list[tuple[str, list[tuple[str, str, str]]]], chunks: list[list[int]],
         dropped: set[int]) -> list[str]:
    """Buffer turns and emit them as documents; turn numbers in ``dropped`` are lost by the buffer."""
    from smartcomment import comment_op, comment_op_scope, comment_session

    turns = []
    for index, (date, said) in enumerate(sessions, start=1):
        with comment_session(category="memory_construction", session_name=f"session {index}"):
            for n, (speaker, role, text) in enumerate(said, start=1):
                turns.append((run.message(f"D{index}:{n}", speaker, role, text, date), f"{speaker}: {text}", date))
    uids = []
    with comment_session(category="memory_construction", session_name="documents"):
        for c, members in enumerate(chunks, start=1):
            kept = [turns[i] for i in members if i not in dropped]
            with comment_op_scope(op_name="memory_system.emit_document", category="extraction",
                                  comment="The buffered turns become one document.") as op:
                value = run.unit(f"doc{c}", "\n".join(t[1] for t in kept), kept[-1][2])
                comment_op(inputs=[turns[i][0] for i in members], outputs=[value], reuse_op=True)
            run.ops[f"chunk:{c}"] = op.op_id
            uids.append(f"doc{c}")
    return uids


def _rag_cara(run: _Trace) -> None:
    _rag(run, [
        ("2023-01-10", [("Cara", "user", "I booked a trip to Lisbon for March."),
                        ("Finn", "assistant", "Fun! I started learning the cello."),
                        ("Cara", "user", "My brother Theo is getting married in June.")]),
        ("2023-02-02", [("Finn", "assistant", "My cello teacher is called Ms. Ortiz."),
                        ("Cara", "user", "I switched jobs, I'm an architect at Hartwell now."),
                        ("Finn", "assistant", "I'll visit my aunt in Toronto in May.")]),
    ], [[0, 1], [2, 3], [4, 5]], dropped={4})
    run.ask("rag-a_q1", "Where did Cara book a trip to?", "Lisbon", ["D1:1"], "Toronto",
            run.search("rag-a_q1", ["doc3"], op_name="memory_system.retrieve"), category="single-hop")
    run.label("RetrievalError", "search:rag-a_q1")
    run.ask("rag-a_q2", "Where does Cara work now?", "Hartwell", ["D2:2"], "Not mentioned.",
            run.search("rag-a_q2", ["doc3", "doc2"], op_name="memory_system.retrieve"), category="single-hop")
    run.label("ExtractionError", "chunk:3")
    run.ask("rag-a_q3", "What instrument is Finn learning?", "the cello", ["D1:2"], "The piano.",
            run.search("rag-a_q3", ["doc1"], op_name="memory_system.retrieve"), category="single-hop")
    run.label("ResponseError", "qa:rag-a_q3")
    run.ask("rag-a_q4", "Who is getting married in June?", "Theo", ["D1:3"], "Cara's brother Theo",
            run.search("rag-a_q4", ["doc2"], op_name="memory_system.retrieve"), category="single-hop")
    run.label("LLMJudgeError", "qa:rag-a_q4")


def _rag_gus(run: _Trace) -> None:
    _rag(run, [
        ("2023-08-01", [("Gus", "user", "I adopted a rabbit named Pickles."),
                        ("Hana", "assistant", "I run a bakery called Crumbs on Main Street."),
                        ("Gus", "user", "I'm reading Piranesi by Susanna Clarke.")]),
    ], [[0, 1], [2]], dropped=set())
    run.ask("rag-b_q1", "What is the name of Gus's rabbit?", "Pickles", ["D1:1"], "Gus has no rabbit.",
            run.search("rag-b_q1", ["doc2"], op_name="memory_system.retrieve"), category="single-hop")
    run.label("RetrievalError", "search:rag-b_q1")
    run.ask("rag-b_q2", "What is Hana's bakery called?", "Crumbs", ["D1:2"], "Main Street Bakery",
            run.search("rag-b_q2", ["doc1"], op_name="memory_system.retrieve"), category="single-hop")
    run.label("ResponseError", "qa:rag-b_q2")
    run.ask("rag-b_q3", "Which book is Gus reading?", "Piranesi", ["D1:3"], "Piranesi by Susanna Clarke",
            run.search("rag-b_q3", ["doc2"], op_name="memory_system.retrieve"), category="single-hop")
    run.label("LLMJudgeError", "qa:rag-b_q3")


# --- long context ---------------------------------------------------------------------------------


def _long_context(run: _Trace, sessions: list[tuple[str, list[tuple[str, str, str]]]], window: int) -> None:
    """Merge every turn into one long-context unit; keep only the newest ``window`` turns."""
    from smartcomment import comment_link, comment_op_scope, comment_session

    kept: list[str] = []
    for index, (date, said) in enumerate(sessions, start=1):
        with comment_session(category="memory_construction", session_name=f"session {index}"):
            for n, (speaker, role, text) in enumerate(said, start=1):
                message = run.message(f"D{index}:{n}", speaker, role, text, date)
                kept = [*kept, f"[{date}] {speaker}: {text}"][-window:]
                with comment_op_scope(op_name="memory_system.merge_context", category="update",
                                      comment="The turn is merged into the long-context unit (trimmed to the window)."
                                      ) as op:
                    if "context" not in run.units:
                        comment_link(source=message, target=run.unit("context", "\n".join(kept), date))
                    else:
                        run.update_unit("context", "\n".join(kept), date, [message])
                run.ops[f"merge:D{index}:{n}"] = op.op_id


def _lc_ivy(run: _Trace) -> None:
    _long_context(run, [
        ("2023-09-04", [("Ivy", "user", "My daughter Lily was born on 2 September."),
                        ("Jon", "assistant", "Congratulations! I'm moving to Seattle next month."),
                        ("Ivy", "user", "We painted the nursery yellow.")]),
        ("2023-10-15", [("Jon", "assistant", "Seattle is rainy but I love my new flat."),
                        ("Ivy", "user", "Lily smiled for the first time yesterday."),
                        ("Jon", "assistant", "I joined a climbing gym called Vertical.")]),
    ], window=4)
    pass_through = run.search("lc-a_q1", ["context"], op_name="memory_system.return_context")
    run.ask("lc-a_q1", "When was Ivy's daughter Lily born?", "2 September 2023", ["D1:1"], "Not mentioned.",
            pass_through, category="temporal")
    run.label("UpdateError", "merge:D2:2")
    run.ask("lc-a_q2", "What is the name of Jon's climbing gym?", "Vertical", ["D2:3"], "Jon climbs in Seattle.",
            run.search("lc-a_q2", ["context"], op_name="memory_system.return_context"), category="single-hop")
    run.label("ResponseError", "qa:lc-a_q2")
    run.ask("lc-a_q3", "What color is the nursery?", "yellow", ["D1:3"], "Yellow",
            run.search("lc-a_q3", ["context"], op_name="memory_system.return_context"), category="single-hop")
    run.label("LLMJudgeError", "qa:lc-a_q3")


def _lc_kai(run: _Trace) -> None:
    _long_context(run, [
        ("2024-01-20", [("Kai", "user", "I got promoted to head chef at Olive Tree."),
                        ("Lea", "assistant", "Amazing! I'm reading Dune again."),
                        ("Kai", "user", "My cat Mochi turned five today.")]),
    ], window=2)
    run.ask("lc-b_q1", "Where is Kai head chef?", "Olive Tree", ["D1:1"], "Kai is a chef.",
            run.search("lc-b_q1", ["context"], op_name="memory_system.return_context"), category="single-hop")
    run.label("UpdateError", "merge:D1:3")
    run.ask("lc-b_q2", "How old did Kai's cat Mochi turn?", "five", ["D1:3"], "Mochi is three.",
            run.search("lc-b_q2", ["context"], op_name="memory_system.return_context"), category="single-hop")
    run.label("ResponseError", "qa:lc-b_q2")


# --- EverMemOS ------------------------------------------------------------------------------------


def _evermemos(run: _Trace, date: str, said: list[tuple[str, str, str]], cells: list[tuple[list[int], str]]) -> None:
    """Detect boundaries over the buffered turns, then extract one episode memory per closed MemCell."""
    from smartcomment import comment_link, comment_op, comment_op_scope, comment_session, comment_variable

    with comment_session(category="memory_construction", session_name="session 1"):
        messages = [run.message(f"D1:{n}", s, r, t, date) for n, (s, r, t) in enumerate(said, start=1)]
        for c, (members, episode) in enumerate(cells, start=1):
            with comment_op_scope(op_name="memory_system.detect_boundary", category="extraction") as op:
                cell = comment_variable("\n".join(f"{said[i][0]}: {said[i][2]}" for i in members), to_runtime=True,
                                        class_name="memcell", category="memcell", encoding_fn=str,
                                        id_strategy=lambda _, c=c: f"cell{c}")
                comment_op(inputs=[messages[i] for i in members], outputs=[cell], reuse_op=True)
            run.ops[f"boundary:{c}"] = op.op_id
            with comment_op_scope(op_name="memory_system.extract_episode", category="extraction") as op:
                raw = comment_variable(episode, to_runtime=True, class_name="raw_episode_response",
                                       category="llm_response", encoding_fn=str, id_strategy=lambda _, c=c: f"cell{c}")
                comment_link(source=cell, target=raw)
                comment_link(source=raw, target=run.unit(f"ep{c}", episode, date))
            run.ops[f"episode:{c}"] = op.op_id


def _hybrid(run: _Trace, qid: str, bm25: list[str], dense: list[str], final: list[str]) -> Callable[[Any], list[str]]:
    """EverMemOS round-1 retrieval: bm25 and embedding searches, then a rerank that keeps ``final``."""
    def retrieve(query: Any) -> list[str]:
        from smartcomment import comment_op, comment_op_scope

        run.search(qid, bm25, op_name="memory_system.bm25_retrieval", label="bm25")(query)
        run.search(qid, dense, op_name="memory_system.embedding_retrieval", label="dense")(query)
        with comment_op_scope(op_name="memory_system.rerank", category="retrieval") as op:
            pool = [run.unit(u, run.units[u]["memory"], run.units[u]["timestamp"]) for u in dict.fromkeys(bm25 + dense)]
            ranked = (final, {"class_name": "reranked_events", "category": "llm_response", "encoding_fn": _JSON,
                              "id_strategy": lambda _: qid})
            comment_op(inputs=[query, *pool], outputs=[ranked], reuse_op=True)
        run.ops[f"rerank:{qid}"] = op.op_id
        return final
    return retrieve


def _em_mia(run: _Trace) -> None:
    _evermemos(run, "2023-11-05", [
        ("Mia", "user", "I ran my first half marathon in Porto last Sunday, in 1:52."),
        ("Ned", "assistant", "Great time! My band Static Bloom plays at Maple Hall on Friday."),
        ("Mia", "user", "I might come. I also started a ceramics class."),
        ("Ned", "assistant", "Ceramics is fun, my cousin Ada teaches it at the Arts Hub."),
    ], [([0, 1], "Mia ran a half marathon in Porto. Ned's band Static Bloom plays at Maple Hall on Friday."),
        ([2, 3], "Mia started a ceramics class; Ned's cousin Ada teaches ceramics at the Arts Hub.")])
    run.ask("em-a_q1", "What was Mia's half marathon time?", "1:52", ["D1:1"], "Mia ran in Porto.",
            _hybrid(run, "em-a_q1", ["ep1"], ["ep1"], ["ep1"]), category="single-hop")
    run.label("ExtractionError", "episode:1")
    run.ask("em-a_q2", "Who teaches ceramics at the Arts Hub?", "Ada", ["D1:4"], "Mia",
            _hybrid(run, "em-a_q2", ["ep2"], ["ep1"], ["ep1"]), category="single-hop")
    run.label("RetrievalError", "rerank:em-a_q2")
    run.ask("em-a_q3", "Where does Ned's band play on Friday?", "Maple Hall", ["D1:2"], "At the Arts Hub.",
            _hybrid(run, "em-a_q3", ["ep1"], ["ep1", "ep2"], ["ep1"]), category="single-hop")
    run.label("ResponseError", "qa:em-a_q3")
    run.ask("em-a_q4", "What class did Mia start?", "a ceramics class", ["D1:3"], "ceramics",
            _hybrid(run, "em-a_q4", ["ep2"], ["ep2"], ["ep2"]), category="single-hop")
    run.label("LLMJudgeError", "qa:em-a_q4")


def _em_omar(run: _Trace) -> None:
    _evermemos(run, "2024-02-11", [
        ("Omar", "user", "I'm flying to Reykjavik on 3 March to see the northern lights."),
        ("Pia", "assistant", "Lucky you. I adopted a greyhound called Comet."),
    ], [([0, 1], "Omar is flying to Reykjavik on 3 March 2024 to see the northern lights. "
                 "Pia adopted a greyhound called Comet.")])
    run.ask("em-b_q1", "When is Omar flying to Reykjavik?", "3 March 2024", ["D1:1"], "In winter.",
            _hybrid(run, "em-b_q1", ["ep1"], ["ep1"], ["ep1"]), category="temporal")
    run.label("ResponseError", "qa:em-b_q1")
    run.ask("em-b_q2", "What is Pia's greyhound called?", "Comet", ["D1:2"], "Comet.",
            _hybrid(run, "em-b_q2", ["ep1"], ["ep1"], ["ep1"]), category="single-hop")
    run.label("LLMJudgeError", "qa:em-b_q2")


GRAPHS: dict[str, list[tuple[str, str, Callable[[_Trace], None]]]] = {
    "mem0": [("conv-a", "U1", _mem0_alice), ("conv-b", "U2", _mem0_dana)],
    "rag": [("rag-a", "U3", _rag_cara), ("rag-b", "U4", _rag_gus)],
    "long_context": [("lc-a", "U5", _lc_ivy), ("lc-b", "U6", _lc_kai)],
    "evermemos": [("em-a", "U7", _em_mia), ("em-b", "U8", _em_omar)],
}


def build_graphs() -> dict[str, dict[str, dict[str, Any]]]:
    """Every fixture graph: split → file stem → exported document with annotations."""
    return {split: {name: _graph(split, name, user, build) for name, user, build in GRAPHS[split]}
            for split in SPLITS}


def write_fixtures(out: str | Path) -> list[Path]:
    """Write the fixtures as ``out/<split>/<name>.json`` (the MemTraceBench layout); return the paths."""
    paths = []
    for split, graphs in build_graphs().items():
        for name, doc in graphs.items():
            path = Path(out) / split / f"{name}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
            paths.append(path)
    return paths


if __name__ == "__main__":
    written = write_fixtures(sys.argv[1] if len(sys.argv) > 1 else "memtracebench-fixtures")
    print(f"wrote {len(written)} graphs under {written[0].parent.parent}")
