"""Metamorphic: the same failures written the way another author would write them are attributed the same.

Each base graph (built here, from `shapes`) is rewritten in one author's style at a time, a rewrite that changes how
the trace is written, not what happened: op names in another namespace and case (``facts.extract`` →
``pipeline/FactsExtract``), the system's own category words for its ops (``update`` → ``reconcile``, ``deletion``
→ ``invalidation``), the speaker moved from the metadata into the text (``**Chloe:** ...``) or into a message object
(``{"role", "text"}``), questions and predictions as message objects, the question's role in its metadata instead
of its class, the question lower-cased without its question mark (a speech transcript), and a delete written as a
``(nil)`` field, a ``null`` value, an ``invalid_at`` stamp, ``status: retracted``, FHIR's ``verificationStatus:
entered-in-error``, ``status: cancelled`` or a TTL sweep's ``expired: true``; messages as records ``{"author",
"text"}`` of the system's own category or as LangChain messages; a planner's command to delete under another key
and verb. memtrace's error type and op must not move.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from memopt.attribution.case import FailedCase
from memopt.attribution.evidence import seed_evidence
from memopt.attribution.memtrace import memtrace
from memopt.judge.judges import LexicalJudge
from memopt.trace.memtracebench import from_memtrace
from memopt.trace.roles import question_text

from . import test_shapes as earlier
from . import test_shapes_44g as fifth
from . import test_shapes_44j as sixth

pytest.importorskip("smartcomment")

Doc = dict[str, Any]


def _nodes(doc: Doc) -> list[dict[str, Any]]:
    return doc["data"]["nodes"]


def _rename_ops(doc: Doc) -> Doc:
    """``facts.extract`` → ``pipeline/FactsExtract`` (the judge keeps its name: MemBase's loader knows it)."""
    for op in doc["data"]["operations"]:
        if op["op_name"] != "llm-judge":
            words = re.split(r"[^A-Za-z0-9]+", op["op_name"])
            op["op_name"] = "pipeline/" + "".join(w[:1].upper() + w[1:] for w in words if w)
    return doc


_SYNONYMS = {"update": "reconcile", "deletion": "invalidation", "write": "apply", "sync": "upsert"}


def _recategorised(doc: Doc, words: dict[str, str]) -> Doc:
    """Each op's category (and its edges') in ``words``' other word for it."""
    ops = {op["op_id"]: op for op in doc["data"]["operations"]}
    for op in ops.values():
        op["category"] = words.get(op["category"], op["category"])
    for e in doc["data"]["edges"]:
        e["category"] = ops[e["op_id"]]["category"]
    return doc


def _category_words(doc: Doc) -> Doc:
    """The system's own words for the categories of its update and delete ops."""
    return _recategorised(doc, _SYNONYMS)


_STAGE_WORDS = {"retrieval": "recall", "response": "reply", "extraction": "memory_extraction", "generation": "reply"}


def _stage_words(doc: Doc) -> Doc:
    """Other words for the categories of extraction, retrieval and answering ops."""
    return _recategorised(doc, _STAGE_WORDS)


def _judge_words(doc: Doc) -> Doc:
    """The gold and the verdict under other words: ``expected_answer``, a JSON verdict of category
    ``judge_verdict``; the prediction's class and category no role word."""
    for n in _nodes(doc):
        if n["category"] == "golden_answers":
            n["category"] = "expected_answer"
        elif n["category"] == "evaluation" and n.get("class_name") == "judge_score":
            n["category"] = "judge_verdict"
            score = json.loads(n["value"])
            score = score.get("score") if isinstance(score, dict) else score
            n["value"] = json.dumps({"score": float(score), "label": "WRONG", "reason": "differs"})
    for n in _answers(doc):
        if n["category"] == "llm_response":
            n["category"] = "assistant_output"
    return doc


def _grader(doc: Doc) -> Doc:
    """The judge as a grader: op ``grader.score`` of category ``grading``, the gold a ``reference``, the verdict a
    ``grade_result``."""
    graders = set()
    for op in doc["data"]["operations"]:
        if op["op_name"] == "llm-judge":
            op["op_name"], op["category"] = "grader.score", "grading"
            graders.add(op["op_id"])
    for e in doc["data"]["edges"]:
        e["category"] = "grading" if e["op_id"] in graders else e["category"]
    for n in _nodes(doc):
        if n["category"] in ("golden_answers", "judge_verdict") or n.get("class_name") == "judge_score":
            n["category"] = "reference" if n["category"] == "golden_answers" else "grade_result"
    return doc


def _python_values(doc: Doc) -> Doc:
    """Structured values as smartcomment's default encoder writes them: Python's ``repr``, not JSON."""
    for n in _nodes(doc):
        text = str(n["value"])
        if text[:1] in "[{":
            try:
                n["value"] = repr(json.loads(text))
            except ValueError:
                continue
    return doc


def _question_received(doc: Doc) -> Doc:
    """Each question written by an ``api.receive`` op (category ``ingest``) from a raw request, and its role in its
    metadata only: no longer a variable no op wrote, nor named by a role word."""
    doc = _role_in_metadata(doc)
    template_op, template_edge = doc["data"]["operations"][0], doc["data"]["edges"][0]
    for i, n in enumerate(_questions(doc)):
        raw = {**n, "name": f"{n['name']}.raw", "class_name": "HttpRequest", "category": "http_request",
               "metadata": {}, "full_name": f"HttpRequest:{n['name']}.raw", "node_id": f"{n['name']}.raw@1",
               "full_node_id": f"HttpRequest:{n['name']}.raw@1", "version": 1}
        op = {**template_op, "op_id": f"op-recv-{i}", "op_name": "api.receive", "category": "ingest",
              "created_at": n["created_at"], "session_id": n["session_id"], "metadata": {}}
        edge = {**template_edge, "edge_id": f"edge-recv-{i}", "op_id": op["op_id"], "category": "ingest",
                "source_full_node_id": raw["full_node_id"], "target_full_node_id": n["full_node_id"],
                "created_at": n["created_at"], "session_id": n["session_id"], "metadata": {}}
        n["metadata"] = {k: v for k, v in (n.get("metadata") or {}).items() if k != "role"}
        doc["data"]["nodes"].insert(doc["data"]["nodes"].index(n), raw)
        doc["data"]["operations"].append(op)
        doc["data"]["edges"].append(edge)
    return doc


def _camel_case(doc: Doc) -> Doc:
    """Categories in CamelCase (``MemoryEntry``, ``Marker``, ``Extraction``), as a typed SDK writes its enums."""
    def camel(word: str) -> str:
        if "&" in word:  # MemBase's "message & query" is a name of its own
            return word
        return "".join(p[:1].upper() + p[1:] for p in re.split(r"[_\s]+", word) if p)

    for n in _nodes(doc):
        n["category"] = camel(n["category"])
    for op in doc["data"]["operations"]:
        op["category"] = camel(op["category"])
    ops = {op["op_id"]: op for op in doc["data"]["operations"]}
    for e in doc["data"]["edges"]:
        e["category"] = ops[e["op_id"]]["category"]
    return doc


def _turns(doc: Doc) -> list[dict[str, Any]]:
    return [n for n in _nodes(doc) if n["category"] == "message" and (n.get("metadata") or {}).get("speaker")]


def _turn_words(doc: Doc) -> Doc:
    """The conversation's messages under the system's own category (``inbound_event``), the speaker in the text."""
    for n in _turns(doc):
        speaker = n["metadata"].pop("speaker")
        n["category"] = "inbound_event"
        n["value"] = f"{speaker}: " + str(n["value"]).removeprefix(f"{speaker}: ")
    return doc


def _speaker_inline(doc: Doc) -> Doc:
    """``Chloe: text`` with ``speaker`` in the metadata → ``**Chloe:** text``, no metadata."""
    for n in _turns(doc):
        speaker = n["metadata"].pop("speaker")
        n["value"] = f"**{speaker}:** " + str(n["value"]).removeprefix(f"{speaker}: ")
    return doc


def _speaker_in_message(doc: Doc) -> Doc:
    """The speaker in a message object ``{"role", "text"}``."""
    for n in _turns(doc):
        speaker = n["metadata"].pop("speaker")
        n["value"] = json.dumps({"role": speaker, "text": str(n["value"]).removeprefix(f"{speaker}: ")})
    return doc


def _message_records(doc: Doc) -> Doc:
    """The conversation's messages as records of the system's own category (``portal_msg``), the speaker as their
    ``author``, nothing in the metadata."""
    for n in _turns(doc):
        speaker = n["metadata"].pop("speaker")
        n["category"], n["class_name"] = "portal_msg", None
        n["value"] = json.dumps({"author": speaker, "text": str(n["value"]).removeprefix(f"{speaker}: ")})
    return doc


def _langchain_messages(doc: Doc) -> Doc:
    """The conversation's messages as LangChain writes them: ``{"type": "human", "name": speaker, "content": ...}``
    (a LangChain ``HumanMessage`` with its name), nothing in the metadata."""
    for n in _turns(doc):
        speaker = n["metadata"].pop("speaker")
        n["value"] = json.dumps({"type": "human", "name": speaker,
                                 "content": str(n["value"]).removeprefix(f"{speaker}: ")})
    return doc


_DELETE_VERBS = {"REMOVE": ("op", "soft_delete"), "SOFT_DELETE": ("action", "archive"), "DELETE": ("verb", "purge")}


def _delete_command_words(doc: Doc) -> Doc:
    """A planner's command to delete under another key and verb (``{"command": "REMOVE"}`` → ``{"op":
    "soft_delete"}``)."""
    for n in _nodes(doc):
        try:
            value = json.loads(str(n["value"]))
        except ValueError:
            continue
        if isinstance(value, dict):
            key = next((k for k in ("command", "stmt", "action") if str(value.get(k)).upper() in _DELETE_VERBS), None)
            if key is not None:
                new_key, verb = _DELETE_VERBS[str(value.pop(key)).upper()]
                n["value"] = json.dumps({new_key: verb, **value})
    return doc


def _questions(doc: Doc) -> list[dict[str, Any]]:
    G, _ = from_memtrace(copy.deepcopy(doc), source="style.json")
    ids = {d["sc_id"] for _, d in G.nodes(data=True) if d.get("kind") == "question"}
    return [n for n in _nodes(doc) if n["full_node_id"] in ids]


def _answers(doc: Doc) -> list[dict[str, Any]]:
    G, _ = from_memtrace(copy.deepcopy(doc), source="style.json")
    ids = {d["sc_id"] for _, d in G.nodes(data=True) if d.get("kind") == "answer"}
    return [n for n in _nodes(doc) if n["full_node_id"] in ids]


def _message_objects(doc: Doc) -> Doc:
    """Question and prediction values as message objects."""
    for role, found in (("user", _questions(doc)), ("assistant", _answers(doc))):
        for n in found:
            if not str(n["value"]).startswith("{"):
                n["value"] = json.dumps({"role": role, "text": n["value"]})
    return doc


def _role_in_metadata(doc: Doc) -> Doc:
    """The question's role in its metadata (``{"role": "question"}``), its class and category the system's."""
    renamed = {}
    for n in _questions(doc):
        if n.get("class_name") == "query":
            old = n["full_node_id"]
            n["class_name"], n["category"] = "Utterance", "utterance"
            n["full_name"] = f"Utterance:{n['name']}"
            n["full_node_id"] = renamed[old] = f"{n['full_name']}@{n['version']}"
            n["metadata"] = {**(n.get("metadata") or {}), "role": "question"}
    for e in doc["data"]["edges"]:
        e["source_full_node_id"] = renamed.get(e["source_full_node_id"], e["source_full_node_id"])
        e["target_full_node_id"] = renamed.get(e["target_full_node_id"], e["target_full_node_id"])
    return doc


def _spoken_question(doc: Doc) -> Doc:
    """The question as a speech transcript writes it: lower case, no question mark."""
    for n in _questions(doc):
        n["value"] = str(n["value"]).lower().rstrip("?")
    return doc


def _tombstone(style: str) -> Callable[[Doc], Doc]:
    """A unit's delete (its next version, a ``marker`` saying DELETED) written another way."""
    def rewrite(doc: Doc) -> Doc:
        by_id = {n["full_node_id"]: n for n in _nodes(doc)}
        for n in _nodes(doc):
            if n["category"] != "marker" or str(n["value"]).strip('"').upper() != "DELETED":
                continue
            previous = by_id.get(f"{n['full_name']}@{int(n['version']) - 1}")
            if previous is None:
                continue
            if style == "(nil)":
                n["value"] = "(nil)"
                continue
            n["category"], n["class_name"] = previous["category"], previous.get("class_name")
            value = previous["value"]
            try:
                record = json.loads(value)
            except ValueError:
                record = {"text": value}
            record = record if isinstance(record, dict) else {"text": record}
            n["value"] = {"null": "null",
                          "invalid_at": json.dumps({**record, "invalid_at": "2024-10-13T09:00:00Z"}),
                          "retracted": json.dumps({**record, "status": "retracted"}),
                          "valid_to": json.dumps({**record, "valid_from": "2024-01-01", "valid_to": "2024-10-13"}),
                          "superseded": json.dumps({**record, "status": "SUPERSEDED"}),
                          "entered-in-error": json.dumps({**record, "verificationStatus": "entered-in-error"}),
                          "expired": json.dumps({**record, "expired": True, "expired_at_tick": 1902}),
                          "cancelled": json.dumps({**record, "status": "cancelled"})}[style]
        return doc
    return rewrite


STYLES: dict[str, Callable[[Doc], Doc]] = {
    "op names": _rename_ops, "category words": _category_words, "stage words": _stage_words,
    "judge words": _judge_words, "turn words": _turn_words, "grader": _grader, "python values": _python_values,
    "question received by an op": _question_received, "CamelCase categories": _camel_case,
    "speaker inline": _speaker_inline,
    "speaker in a message object": _speaker_in_message, "message objects": _message_objects,
    "role in metadata": _role_in_metadata, "spoken question": _spoken_question,
    "(nil) field": _tombstone("(nil)"), "null value": _tombstone("null"), "invalid_at": _tombstone("invalid_at"),
    "status retracted": _tombstone("retracted"), "valid_to": _tombstone("valid_to"),
    "status superseded": _tombstone("superseded"), "entered-in-error": _tombstone("entered-in-error"),
    "expired flag": _tombstone("expired"), "status cancelled": _tombstone("cancelled"),
    "message records": _message_records, "LangChain messages": _langchain_messages,
    "delete command words": _delete_command_words,
}


def _bases() -> dict[str, tuple[Doc, str, str, tuple[str, ...], tuple[str, str]]]:
    """name → (graph, question, gold, evidence, the attribution expected)."""
    coach, adder = earlier._coach("tombstone version")
    profile, syncer = earlier._profile()
    trips, trip_ops = earlier._trips("Lisbon on 12 May 2023; Porto on 3 June 2023", second_stored=False)
    kv, planner = fifth._key_store("DELETED")
    desk, summarise = fifth._tickets()
    home, _, reply = fifth._household("ana")
    voice, recall, _ = fifth._voice("Pick up Noor from soccer practice every Wednesday at 5:45 PM")
    pills, pill_ops = sixth._pills()
    grants, grant_ops = sixth._grants()
    return {
        "delete": (coach, earlier.GOAL, "a sub-25 minute 5k", ("msg-11",), ("DeletionError", adder)),
        "overwrite": (profile, earlier.FOOD, "ramen", ("D1:1",), ("UpdateError", syncer)),
        "extraction": (trips, earlier.TRIPS, "Lisbon on 12 May 2023; Porto on 3 June 2023", ("D1:1", "D2:1"),
                       ("ExtractionError", trip_ops["extract2"])),
        "planned delete": (kv, "What do I have on Tuesday evenings?", "Pottery class", ("chat.1",),
                           ("DeletionError", planner)),
        "summary": (desk, "How much did you refund me for the Premium charge?", "$84.20", ("tck1-m2",),
                    ("ExtractionError", summarise)),
        "response": (home, "What diet did I tell you I'm following?", "vegetarian", ("utt-1",),
                     ("ResponseError", reply)),
        "retrieval": (voice, "what time do i pick up noor from soccer", "5:45 PM", ("clip_1.asr",),
                      ("RetrievalError", recall)),
        "delete not carried out": (pills, sixth.PILLS, "3 (Vetmedin 2 + Thyroxine 1; Apoquel was stopped)",
                                   ("ChatTurn:dm/01@1", "ChatTurn:dm/02@1"), ("DeletionError", pill_ops["remove"])),
        "another record's field": (grants, sixth.GRANT, "$45,000", ("utterance:zoom-77/s05@1",),
                                   ("UpdateError", grant_ops["write"])),
    }


def _blame(doc: Doc, question: str, gold: str, evidence: tuple[str, ...]) -> tuple[str, str]:
    G, _ = from_memtrace(doc, source="style.json")
    case = next(c for c in G.graph["cases"] if question_text(c["question"]) == question_text(question))
    seeded, pseudo = seed_evidence(G, question, gold, evidence)
    found = memtrace(FailedCase(G, case["case_id"], question, gold, seeded, "", 0, pseudo, case.get("date")),
                     LexicalJudge())
    return found.error_type, G.nodes[found.op_id]["sc_op_id"]


@pytest.fixture(scope="module")
def bases() -> dict[str, tuple[Doc, str, str, tuple[str, ...], tuple[str, str]]]:
    return _bases()


@pytest.mark.parametrize("style", list(STYLES))
def test_an_author_s_style_does_not_move_the_attribution(bases, style):
    rewritten = 0
    for name, (doc, question, gold, evidence, expected) in bases.items():
        assert _blame(copy.deepcopy(doc), question, gold, evidence) == expected, name
        styled = STYLES[style](copy.deepcopy(doc))
        rewritten += styled != doc
        assert _blame(styled, question, gold, evidence) == expected, f"{name} in the style {style!r}"
    assert rewritten, f"the style {style!r} rewrote no base graph"


def test_styles_compose(bases):
    """Every style at once (the deletes as ``invalid_at``)."""
    for name, (doc, question, gold, evidence, expected) in bases.items():
        styled = copy.deepcopy(doc)
        for style, rewrite in STYLES.items():
            if style not in ("(nil) field", "null value", "status retracted", "speaker in a message object",
                             "valid_to", "status superseded", "entered-in-error", "expired flag",
                             "status cancelled", "message records", "LangChain messages"):
                styled = rewrite(styled)
        assert _blame(styled, question, gold, evidence) == expected, name


@pytest.mark.parametrize("asked", [
    lambda q: q.lower().rstrip("?"),
    lambda q: f"**Ana:** {q}",
    lambda q: "  ".join(q.upper().split()),
])
def test_a_cases_file_finds_its_question_however_it_is_written(tmp_path, bases, asked):
    """From a graph without annotations and a cases file alone: the question written in another case, with a
    speaker tag or other whitespace names the same case, and is attributed the same."""
    from memopt.attribution.attribute_run import attribute_trace

    for name, (doc, question, gold, _, _) in bases.items():
        found = []
        for text in (question, asked(question)):
            folder = tmp_path / f"{name}-{len(found)}"
            folder.mkdir()
            (folder / "graph.json").write_text(json.dumps(doc), encoding="utf-8")
            cases = folder.parent / f"{name}-{len(found)}.jsonl"
            cases.write_text(json.dumps({"question": text, "expected": gold, "graph": "graph.json"}) + "\n",
                             encoding="utf-8")
            [attribution] = attribute_trace(folder, LexicalJudge(), cases_file=cases, gold_evidence=False)
            found.append((attribution.error_type, attribution.op_id))
        assert found[1] == found[0], name
