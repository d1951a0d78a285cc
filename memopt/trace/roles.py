"""What a smartcomment variable is to memopt, whichever way its writer marked the role it plays.

Writers mark roles in the class name (``class_name="query"``), in the category (``prediction``,
``golden_answers``, ``judge_output``), or in the node's metadata (``{"role": "question"}``, ``{"kind":
"gold_answer"}``), in any case and with any separator, and under several words for each role:

==========================  ======================================================================================
kind                        role words (class, category, or metadata ``role`` / ``kind`` / ``type`` / ``node_role``)
==========================  ======================================================================================
``question``                ``message & query``; class query / question with category message / query / question;
                            any of query, question, user_query, user_question on a variable no op wrote
``turn``                    category ``message``; message, turn, utterance, chat_message, dialogue_turn, ... on a
                            variable no op wrote, or one whose metadata names a speaker or a user / assistant role
``answer``                  prediction, predicted_answer, final_answer, model_answer, answer, generated_answer
``gold``                    golden_answers, gold, gold_answer, ground_truth, reference_answer, expected_answer
``judgement``               judge_response, judge_score, judge_output, judgement, verdict, evaluation, eval_result;
                            any word with a part verdict, judge, judgement, grade or grading (``grade_result``)
``context``                 memory_context, context, retrieved_context
``memory``                  memory_entry (other units by the role they play: `memopt.trace.store_units`)
``marker``                  category ``marker`` whose class or value says DELETE (`memopt.trace.tombstones`)
==========================  ======================================================================================

A judge's inputs say the rest (`judged_roles`): what a judge op reads besides the question and the gold is the
answer it judged, when no role word says so (a ``response``, an ``output``), and a variable no op wrote that it
reads besides the question and the answer is the gold.

Anything else is None here: a store unit by its role, or its category (`memopt.trace.smartcomment_read`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from memopt.core.text import python_literal
from memopt.trace.dates import read_day
from memopt.trace.tombstones import is_delete_class, is_emptied, is_tombstone

__all__ = ["base_kind", "decode_value", "gold_text", "judged_roles", "question_text", "slug"]

_QUESTION = frozenset({"query", "question", "user_query", "user_question", "query_message", "message_query",
                       "message_&_query", "message_and_query", "message&query"})
_TURN = frozenset({"message", "turn", "utterance", "chat_message", "chat_turn", "dialogue_turn", "dialog_turn",
                   "conversation_turn", "conversation_message", "user_message", "assistant_message", "dialogue",
                   "dialog", "chat"})
_ANSWER = frozenset({"prediction", "predicted_answer", "final_answer", "model_answer", "answer", "generated_answer",
                     "system_answer", "agent_answer", "model_prediction"})
_GOLD = frozenset({"golden_answers", "golden_answer", "gold", "gold_answer", "gold_answers", "ground_truth",
                   "reference_answer", "expected_answer", "expected_answers", "answer_key", "expected",
                   "reference", "correct_answer", "target_answer"})
_JUDGEMENT = frozenset({"judge_response", "judge_score", "judge_output", "judgement", "judgment", "judge",
                        "verdict", "evaluation", "eval_result", "grade", "judge_result"})
_VERDICT_WORDS = frozenset({"verdict", "judge", "judgement", "judgment", "grade", "grading"})
_CONTEXT = frozenset({"memory_context", "context", "retrieved_context", "retrieval_context"})
_SPEAKERS = frozenset({"user", "assistant", "human", "ai"})
_META_KEYS = ("role", "kind", "type", "node_role", "node_type", "semantic_role")


def slug(text: str) -> str:
    """A name as memopt writes kinds (``memory_file``)."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "variable"


def decode_value(raw: str) -> Any:
    """A value as written by its encoder: JSON, a Python literal (``repr``, smartcomment's default), or text."""
    text = raw.strip()
    if text[:1] in "[{":
        try:
            return json.loads(text)
        except ValueError:
            pass
    if text[:1] in "[{('\"" and len(text) < 200_000:
        try:
            value = python_literal(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return raw
        return value if isinstance(value, (str, dict, list)) else raw
    return raw

_ROLE_TAG = re.compile(r"^[\s*_\[(]*[A-Za-z][A-Za-z'-]*(?:\s[A-Za-z][A-Za-z'-]*){0,2}[\s*_\])]*:[\s*_]*(?=\w)")


def question_text(text: Any) -> str:
    """A question as every reader matches it: lower case, without punctuation, a leading speaker tag
    (``**Sofia:**``, ``User:``) or extra whitespace, so a transcript's "what time do i pick up noor" is the
    annotation's "What time do I pick up Noor?"."""
    plain = _ROLE_TAG.sub("", str(text).strip(), count=1) if ":" in str(text)[:40] else str(text)
    return " ".join(re.sub(r"[^\w\s]|_", " ", plain.lower()).split())


def gold_text(golden: Any) -> str:
    """A gold as memopt reads it: a list of several answers names items the answer needs (as the graphs' authors
    write a multi-item gold), a list of one is that answer, and so is a list whose items all say one thing in
    different writings (``["August 15, 2026", "2026-08-15"]``: one day; ``["Yes", "yes."]``) or at more length
    (``["7", "7 Tage"]``, ``["3", "three times"]``)."""
    if isinstance(golden, list):
        items = [str(g) for g in golden if str(g).strip()]
        said = [_one_answer(i) for i in items]
        if len(set(said)) == 1 or _one_thing(said):
            return items[0]
        return json.dumps(items, ensure_ascii=False) if len(items) > 1 else (items[0] if items else "")
    return str(golden)


_SMALL = {w: str(n) for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}


def _one_answer(item: str) -> str:
    """An answer as written alike in every writing: the day a full date gives, else its words in lower case (small
    numbers as digits)."""
    day = read_day(item)
    if day is not None:
        return day.isoformat()
    return " ".join(_SMALL.get(w, w) for w in re.sub(r"[^\w\s]", " ", item.lower()).split())


def _one_thing(said: list[str]) -> bool:
    """Whether answers are one answer, longer and shorter: the shortest's words are in every other ("7", "7 Tage";
    "3", "three times")."""
    shortest = set(min(said, key=len).split())
    return len(said) > 1 and bool(shortest) and all(shortest <= set(s.split()) for s in said)


def _word(text: Any) -> str:
    """A role word in one spelling: ``UserQuestion``, ``user-question`` and ``user question`` are ``user_question``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", str(text or "").strip())
    return re.sub(r"[\s\-]+", "_", spaced.lower())


def _question_word(word: str) -> bool:
    """A word naming a question, alone or qualified (``eval_question``, ``test_query``, ``probe``)."""
    return word in _QUESTION or word.rsplit("_", 1)[-1] in ("question", "query", "probe")


def _says_deleted(node: dict[str, Any], meta: dict[str, Any]) -> bool:
    """Whether a variable's value (or metadata) says a delete, or holds nothing: what a marker's value says."""
    value = decode_value(str(node.get("value", "")))
    value = value.strip('"') if isinstance(value, str) else value
    return is_tombstone(value, meta) or is_emptied(value)


def base_kind(node: dict[str, Any], starting: bool = False) -> str | None:
    """What a smartcomment variable is to memopt (see the module docstring); ``starting``: no op wrote it."""
    cls, category = str(node.get("class_name") or ""), str(node["category"] or "")
    lower_cls, lower_category = _word(cls), _word(category)
    meta = node.get("metadata") if isinstance(node.get("metadata"), dict) else {}
    said = [_word(meta[k]) for k in _META_KEYS if isinstance(meta.get(k), str)]
    words = [w for w in (lower_cls, lower_category, *said) if w]
    if lower_category in ("message_&_query", "message&query") or (lower_cls in ("query", "question")
                                                                   and lower_category in ("message", "query",
                                                                                          "question")):
        return "question"
    if lower_category == "message":
        return "turn"
    if lower_category == "marker":  # a DELETE marker; other markers (EverMemOS's no-split, failed) only signal
        deleting = is_delete_class(cls) or _says_deleted(node, meta)
        return "marker" if deleting else slug(cls or "signal_marker")
    if is_delete_class(category) and _says_deleted(node, meta):  # category ``tombstone`` / ``deleted``: "EVICTED"
        return "marker"
    if lower_category == "memory_entry":
        return "memory"
    if lower_category == "prompt":
        return "prompt"
    if starting and any(_question_word(w) for w in words):
        return "question"
    for role, vocabulary in (("answer", _ANSWER), ("gold", _GOLD), ("judgement", _JUDGEMENT),
                             ("context", _CONTEXT)):
        if any(w in vocabulary for w in words):
            return role
    if any(set(w.split("_")) & _VERDICT_WORDS for w in words):  # judge_verdict, grade_result, llm_judge_output
        return "judgement"
    speaks = bool(meta.get("speaker") or meta.get("speaker_name")) or any(w in _SPEAKERS for w in said)
    if starting and (any(w in _TURN for w in words) or speaks):
        return "turn"
    return None


def judged_roles(kinds: dict[str, str | None], edges: list[dict[str, Any]], written: set[str]) -> dict[str, str]:
    """The answer and the gold of each judge op no role word named: among the sources of its edges into a judgement
    next to a question, the one an op wrote is the answer, one no op wrote the gold (``written``: the variables an
    edge goes into)."""
    sources: dict[tuple[str, str], set[str]] = {}
    for e in edges:
        if kinds.get(e["target_full_node_id"]) == "judgement":
            sources.setdefault((e["op_id"], e["target_full_node_id"]), set()).add(e["source_full_node_id"])
    found: dict[str, str] = {}
    for read in sources.values():
        if not any(kinds.get(s) == "question" for s in read):
            continue
        unnamed = [s for s in read if kinds.get(s) is None]
        answers = [s for s in unnamed if s in written]
        golds = [s for s in unnamed if s not in written]
        if len(answers) == 1 and not any(kinds.get(s) == "answer" for s in read):
            found[answers[0]] = "answer"
        if len(golds) == 1 and not any(kinds.get(s) == "gold" for s in read):
            found[golds[0]] = "gold"
    return found
