"""Structured feedback as the examples' fields (used only by `memopt.simlm.examples`).

JSON objects and arrays, Markdown tables and YAML-ish blocks (`memopt.simlm.example_layouts`) found in a feedback
text become (hint, text) fields, one list per example: an object holding a question is an example; its keys are
the hints its values are read under; a list of objects that ask nothing (its turns, its memories) belongs to the
example holding it; a name next to a first-person text (or any text under an 'evidence' / 'turns' key) is its
speaker; 'before' / 'after' values are a replaced pair. The ``reader`` is `memopt.simlm.examples`' reader: its
``is_name`` says what is a name, and advice found outside the examples joins its ``advice``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from memopt.core.text import words
from memopt.simlm.example_layouts import TURN, structured_blocks
from memopt.simlm.example_parts import CUES, FIRST_PERSON, LABEL_WORDS, QUESTION, is_advice, role_of

__all__ = ["blocks", "json_examples", "sentences"]


def json_values(text: str) -> list[tuple[int, int, Any]]:
    """JSON objects and arrays embedded in the text, as (start, end, value)."""
    decoder = json.JSONDecoder()
    out, i = [], 0
    while i < len(text):
        if text[i] in "{[":
            try:
                value, end = decoder.raw_decode(text, i)
            except ValueError:
                i += 1
                continue
            if isinstance(value, (dict, list)) and _strings(value):
                out.append((i, end, value))
                i = end
                continue
        i += 1
    return out


def blocks(text: str) -> list[tuple[int, int, Any]]:
    """JSON values, Markdown tables and YAML-ish blocks of the text, in order and not overlapping."""
    out: list[tuple[int, int, Any]] = []
    for start, end, value in sorted(json_values(text) + structured_blocks(text), key=lambda b: b[0]):
        if not out or start >= out[-1][1]:
            out.append((start, end, value))
    return out


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _key_words(key: str) -> str:
    """A key's words ('sourceSpeaker', 'src.speaker', 'stage_out' → 'source Speaker', 'src speaker', 'stage output')."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", key)
    return re.sub(r"\b(in|out)$", r"\1put", " ".join(re.sub(r"[_.\-]", " ", spaced).split()))


def json_examples(value: Any, reader: Any) -> list[list[tuple[str, str]]]:
    """The examples in a JSON value: objects holding a question, as (hint, text) fields."""
    if isinstance(value, list):
        return [fields for v in value for fields in json_examples(v, reader)]
    if not isinstance(value, dict):
        return []
    fields = _json_fields(value, "", reader)
    nested = [f for v in value.values() if _holds_examples(v) for f in json_examples(v, reader)]
    if any(QUESTION.search(text) or _asks_without_mark(text) for _, text in fields):
        return [fields, *nested]
    reader.advice += [s for _, text in fields for s in sentences(text) if is_advice(s, reader.is_name)]
    return nested


def _holds_examples(value: Any) -> bool:
    """Whether a JSON list holds examples (objects, one of them asking a question), not parts of one."""
    return isinstance(value, list) and any(isinstance(x, dict) and any(QUESTION.search(t) or _asks_without_mark(t)
                                                                       for t in _strings(x)) for x in value)


def _asks_without_mark(text: str) -> bool:
    return bool(re.match(r"^(when|what|where|who|which|how)\b", text.strip(), re.I)) and len(words(text)) >= 3


def _json_fields(obj: dict, prefix: str, reader: Any) -> list[tuple[str, str]]:
    """(hint, text) leaves of one example object; a name next to a first-person text becomes 'Name: text', and so
    does each item of a list of texts beside a list of as many names."""
    lists = {k: v for k, v in obj.items() if isinstance(v, list) and v and all(isinstance(x, str) for x in v)}
    for k, who in [(k, v) for k, v in lists.items() if _speakers_key(k) and all(len(_names(x, reader)) == 1
                                                                                for x in v)]:
        said = next((t for t, v in lists.items() if t in obj and len(v) == len(who) and
                     all(len(words(x)) >= 3 for x in v)), None)
        if said is not None:
            obj = {**{t: v for t, v in obj.items() if t != k},
                   said: [f"{n}: {x}" for n, x in zip(who, obj[said], strict=True)]}
    direct = {k: v for k, v in obj.items() if isinstance(v, (str, int, float)) and not isinstance(v, bool)}
    texts = {k: str(v) for k, v in direct.items()}
    names = [k for k, v in texts.items() if _names(v, reader) and _speakers_key(k)]
    said = CUES["turn"].search(prefix)  # under 'evidence' / 'turns': every text next to a name is its words
    spoken = [k for k, v in texts.items() if k not in names and not TURN.match(v) and
              (FIRST_PERSON.search(v) or (said and len(words(v)) >= 3))]
    out: list[tuple[str, str]] = []
    order = list(texts)
    used = set()
    for k in spoken if names else []:  # the name next to the utterance is its speaker
        who = min(names, key=lambda n: (abs(order.index(n) - order.index(k)), order.index(n) > order.index(k)))
        out += [(f"{prefix} {_key_words(k)}", f"{name}: {said}")
                for name, said in _spoken(texts[who], texts.pop(k), reader)]
        used.add(who)
    for who in used:
        texts.pop(who)
    for k, v in texts.items():
        text = f"{v.rstrip('?')}?" if _asks_without_mark(v) and "?" not in v else v
        out.append((f"{prefix} {_key_words(k)}", text))
    for k, v in obj.items():
        if isinstance(v, dict):
            out += _json_fields(v, f"{prefix} {_key_words(k)}", reader)
        elif isinstance(v, list) and not any(isinstance(x, dict) for x in v):
            out += [(f"{prefix} {_key_words(k)}", _pair_text(x, reader)) for x in v if str(x).strip()] or \
                [(f"{prefix} {_key_words(k)}", "")]
        elif isinstance(v, list) and not _holds_examples(v):  # parts of this example, e.g. its turns
            out += [f for x in v if isinstance(x, dict) for f in _json_fields(x, f"{prefix} {_key_words(k)}", reader)]
    return out


def _speakers_key(key: str) -> bool:
    """Whether a key may hold speakers: it names no answer and no other field ('expected', 'got', 'stage')."""
    return role_of(_key_words(key)) is None and _key_words(key).lower() not in LABEL_WORDS


def _names(value: str, reader: Any) -> list[str]:
    """The names a value lists ('Xavi', 'Xavi / Gina', 'Xavi, Xavi'), each of at most two words; else none."""
    names = [n.strip() for n in re.split(r"\s*(?:[/,;&]|\band\b)\s*", value) if n.strip()]
    ok = all(len(n.split()) <= 2 and all(reader.is_name(t) for t in n.split()) for n in names)
    return names if ok else []


def _spoken(speakers: str, text: str, reader: Any) -> list[tuple[str, str]]:
    """Who said what: each of several speakers with its part of the text (parts split as the names are, else by
    sentence), or one speaker (or one person named several times) with all of it."""
    names = _names(speakers, reader)
    for parts in (re.split(r"\s+/\s+|\s*;\s+|\s+\|\s+", text), sentences(text)):
        if len(names) > 1 and len(parts) == len(names):
            return list(zip(names, parts, strict=True))
    return [(names[0], text)] if len(set(names)) == 1 else [(speakers, text)]


def _pair_text(x: Any, reader: Any) -> str:
    """A list item as text: a [speaker, words] pair is 'Speaker: words'."""
    if isinstance(x, list) and len(x) == 2 and all(isinstance(y, str) for y in x) and len(x[0].split()) <= 2 and \
            all(reader.is_name(t) for t in x[0].split()):
        return f"{x[0]}: {x[1]}"
    return str(x)



def sentences(text: str) -> list[str]:
    """The sentences of a text (split after '.' / '!' and at line breaks)."""
    return [s.strip() for s in re.split(r"(?<=[.!])\s+|\n+", text) if s.strip()]
