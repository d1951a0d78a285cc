"""Read the examples in reflection feedback the way a person would, whatever their format.

Feedback is free text: labelled lines, JSON with any key names, a bulleted list, or plain prose.
`read_feedback` finds the examples in it (one per question asked) and sorts the pieces of each by
what they *are*, not by the labels around them:

- the question: a sentence ending with '?' (or a JSON value starting with a question word) that is
  not a line of dialogue;
- source turns: 'Name: text', a sentence in the first person in quotes attributed to someone
  ('Zane said "I went there yesterday"'), or a JSON object holding a name and a first-person text;
- statements: third-person sentences about a named person (what an operation produced, stored or
  read). Next to a word of replacing ("replaced", "overwritten", "became", "→") two statements
  make an old/new pair; next to a word of removal ("deleted", "removed") a statement was removed;
  next to a word of looking up ("retrieved", "read", "context", "search") it was read at question
  time;
- short phrases: the answers. The one a person calls expected ("expected", "gold", "should have
  been", "correct") is the gold answer, the one called answered or got is the system's; without
  such words, the one that answers the question (an absolute date for a "when" question, the one
  the source turns support, a real answer when the question's person said it) is the gold, else
  the first;
- advice: general instruction sentences that are not about one example ("Facts should be short.").

Only generic English role words are read (a person's "expected", "said", "stored"), never a
particular tool's section labels, error-type names or operation ids; a name is a capitalised word
that the feedback never writes in lower case.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from memopt.simlm.example_layouts import LABEL_WORDS, TURN_CONTEXT, error_or_op, normalize, structured_blocks
from memopt.simlm.example_parts import (
    FIRST_PERSON,
    META,
    NOT_NAMES,
    QUESTION,
    QUOTE,
    Example,
    assign_answers,
    is_advice,
    is_statement,
    lead_words,
    role_of,
)
from memopt.text import find_relative_dates, words

__all__ = ["Reading", "read_feedback"]

_BULLET = re.compile(r"^\s*(?:[-*•+>]+|\d+[.)]|\(\w\))\s+")
_LABEL = re.compile(r"^(?P<label>[A-Za-z][\w '/()#.-]{0,40}?)\s*(?:[:=]|\s[-–—]+>?(?=\s)|=>)\s*(?P<rest>.*)$")
_TURN = re.compile(r"^(?P<who>[A-Z][\w'-]*(?: [A-Z][\w'-]*)?)\s*(?:\([^)]{0,30}\))?:\s+(?P<text>\S.*)$")
_SAID = re.compile(r"^(?P<who>[A-Z][\w'-]*)\s+(?:said|says|told \w+|wrote|mentioned|explained)\s*[:,]?\s+(?P<text>.+)$")
_SAID_BEFORE = re.compile(r"\b([A-Z][\w'-]*)\s*(?:\([^)]{0,30}\))?\s*(?:(?:had|has|have|once|then|also|earlier)\s+)?"
                          r"(?:(?:said|says|wrote|writes|asked|mentioned|explained|replied|told \w+)\b[^\"“]{0,15}|"
                          r":\s*)$")
_SAID_AFTER = re.compile(r"^\W{0,3}\s*(?:(?:said|says|wrote|asked|replied)\s+|[—-]\s*|\()([A-Z][\w'-]*)|"
                         r"^\W{0,3}\s*([A-Z][\w'-]*)\s+(?:had\s+)?(?:said|says|wrote|writes|replied|added|told)\b")
_ROLE_NOUNS = frozenset("answer answers gold response reply system model output prediction truth reference "
                         "target".split())
_INNER_QUESTION = re.compile(r"(?<=\s)(?:When|What|Where|Who|Whom|Whose|Which|Why|How|Did|Does|Do|Is|Are|Was|"
                             r"Were|Has|Have|Had|Can|Could|Will|Would)\b")
_SEPARATORS = re.compile(r"\s+\|\s+|\s+/\s+|\s*\n\s*")
_CLAUSES = re.compile(r";\s+|(?<=[.!])\s+(?=[A-Z\"“'])|,\s+(?=(?:but\s+|and\s+)?(?:got|answered|expected|gold|"
                      r"the system|the model|it said|it answered|should|instead|predicted|correct)\b)", re.I)

_REPLACED = re.compile(r"\b(replac\w*|overwr\w*|became|become|becomes|changed to|turned into|updated to|"
                       r"superseded|rewritten)\b|→|->|=>", re.I)
_REMOVED = re.compile(r"\b(delet\w*|remov\w*|erased?|wiped|forgot\w*|gone)\b", re.I)
_READ = re.compile(r"\b(read|retriev\w*|context|search\w*|looked up|found|shown|given from)\b", re.I)
_HELD = re.compile(r"\b(produc\w*|extract\w*|stor\w*|held|kept|saved|wrote|written|output|facts?|memor\w*|"
                   r"summar\w*|recorded)\b", re.I)


Phrases = list[tuple[str, str | None]]  # short answer phrases with their role ("gold", "answer" or None)


@dataclass
class Reading:
    """The examples found in a feedback text, and its general advice sentences."""

    examples: list[Example]
    advice: list[str]


class _Reader:
    """One pass over a feedback text (the names it uses are known before the examples are read)."""

    def __init__(self, text: str) -> None:
        self.lower = {w for w in re.findall(r"[A-Za-z][\w'-]*", text) if w.islower()}
        self.advice: list[str] = []

    def is_name(self, token: str) -> bool:
        """A capitalised word that is no role word and that the feedback never writes in lower case."""
        token = token.removesuffix("'s")
        return bool(token[:1].isupper()) and token.lower() not in NOT_NAMES and token.lower() not in self.lower

    def is_label(self, label: str, rest: str, hint: str) -> bool:
        """Whether 'label: rest' is a labelled field (not a turn of someone named like the label)."""
        first = label.split()[0]
        return not self.is_name(first) or (len(label.split()) == 1 and not self.speaker(first, rest, hint))

    def speaker(self, who: str, text: str, hint: str = "") -> bool:
        """Whether 'who: text' is a turn of the conversation: a name, and for a word that labels questions or
        answers ('Q', 'A', 'Asked'), only when the words around say it is a turn or the text is someone's words."""
        if not self.is_name(who):
            return False
        if who.lower() not in LABEL_WORDS:
            return True
        return bool(TURN_CONTEXT.search(hint)) or (bool(FIRST_PERSON.search(text)) and not QUESTION.search(text))

    # --- blocks ---------------------------------------------------------------------------------

    def read(self, text: str) -> Reading:
        """JSON values first, then the prose: a paragraph asking questions holds one example per question."""
        examples: list[Example] = []
        prose = []
        at = 0
        for start, end, value in _blocks(text):
            prose.append(text[at:start])
            at = end
            examples += [self.example(fields) for fields in _json_examples(value, self)]
        prose.append(text[at:])
        for paragraph in re.split(r"\n\s*\n", "\n".join(prose)):
            lines = [line for line in paragraph.splitlines() if line.strip()]
            hints = _section_hints(lines)
            starts = [i for i, line in enumerate(lines) if self.asks(line, hints[i])]
            if not starts:
                self.advice += [s for s in _sentences(paragraph) if is_advice(s, self.is_name)]
                continue
            cuts = [0, *starts[1:], len(lines)]
            for a, b in zip(cuts, cuts[1:], strict=False):
                examples.append(self.example(list(zip(hints[a:b], lines[a:b], strict=True))))
        return Reading([e for e in examples if e.question], list(dict.fromkeys(self.advice)))

    def asks(self, line: str, hint: str = "") -> bool:
        """Whether a line asks a question (and is not a line of dialogue)."""
        body = _BULLET.sub("", line).strip()
        for _ in range(2):
            turn = _TURN.match(body)
            if turn and self.speaker(turn.group("who"), turn.group("text"), hint):
                return False
            label = _LABEL.match(body)
            body = label.group("rest").strip() if label else body
        return bool(QUESTION.search(body))

    def example(self, fields: list[tuple[str, str]]) -> Example:
        """One example from its (hint, text) fields; then which short phrase is the gold answer."""
        ex = Example()
        phrases: list[tuple[str, str | None]] = []
        for hint, text in fields:
            self.field(ex, phrases, hint, text)
        assign_answers(ex, phrases)
        return ex

    # --- fields ---------------------------------------------------------------------------------

    def field(self, ex: Example, phrases: Phrases, hint: str, text: str) -> None:
        """A line or JSON value: its label joins the hint; lists, turns, quotes and clauses are read in turn."""
        text = _BULLET.sub("", text).strip()
        if not text:
            return
        label = _LABEL.match(text)
        if label and '"' not in label.group("label") and len(label.group("label").split()) <= 5 and \
                self.is_label(label.group("label"), label.group("rest"), hint):
            if not label.group("rest").strip():
                return
            hint, text = f"{hint} {label.group('label')}", label.group("rest").strip()
            if _HELD.search(hint) and not _READ.search(hint):
                ex.shows_output = True
        error, operation = error_or_op(hint, text, labelled=True) if hint.strip() else (None, None)
        if error or operation:
            ex.error, ex.operation = ex.error or error, ex.operation or operation
            return
        error, operation = error_or_op("", text)  # named in a sentence: 'blamed on mem0.extract (ExtractionError)'
        ex.error, ex.operation = ex.error or error, ex.operation or operation
        parts = [p for p in _SEPARATORS.split(text) if p.strip()]
        if len(parts) > 1:
            for part in parts:
                self.field(ex, phrases, hint, part)
            return
        turn = _TURN.match(text)
        if turn and self.speaker(turn.group("who"), turn.group("text"), hint):
            self.turn(ex, hint, turn.group("who"), turn.group("text").strip())
            return
        quotes = list(QUOTE.finditer(text))
        if quotes:
            self.quoted(ex, phrases, hint, text, quotes)
            return
        for clause in _CLAUSES.split(text):
            self.piece(ex, phrases, hint, clause)

    def turn(self, ex: Example, hint: str, speaker: str, text: str) -> None:
        """A line of dialogue: a source turn, or, under words of reading or storing, an item read or held."""
        if len(text) > 1 and text[0] + text[-1] in ('""', "“”"):
            text = text[1:-1].strip()
        if _READ.search(hint):
            ex.context.append(f"{speaker}: {text}")
        elif _HELD.search(hint):
            ex.items.append(f"{speaker}: {text}")
        else:
            ex.turns.append((speaker, text))

    def quoted(self, ex: Example, phrases: Phrases, hint: str, text: str, quotes: list[re.Match]) -> None:
        """A text with quotes: replaced pairs, then each quote with the words around it, then the question."""
        spans = [(q.start(), q.end(), next(g for g in q.groups() if g is not None).strip()) for q in quotes]
        used: set[int] = set()
        for i in range(len(spans) - 1):
            between = text[spans[i][1]:spans[i + 1][0]]
            old, new = spans[i][2], spans[i + 1][2]
            if _REPLACED.search(between) and is_statement(old, self.is_name) and is_statement(new, self.is_name):
                passive = re.search(r"\bby\b|→|->|=>|\bbecame\b|\bto\b", between)
                ex.replaced.append((old, new) if passive else (new, old))
                ex.shows_output = True
                used |= {i, i + 1}
        for i, (start, end, inner) in enumerate(spans):
            if i in used:
                continue
            before = text[spans[i - 1][1] if i else 0:start]
            after = text[end:spans[i + 1][0] if i + 1 < len(spans) else len(text)]
            self.piece(ex, phrases, f"{hint} {before[-60:]}", inner, after=after[:40], quoted=True)
        rest = QUOTE.sub(" ", text)
        for clause in _CLAUSES.split(rest):
            if QUESTION.search(clause) or role_of(clause) is not None:
                self.piece(ex, phrases, hint, clause, hinted_only=True)

    def piece(self, ex: Example, phrases: Phrases, hint: str, text: str, *, after: str = "", quoted: bool = False,
              hinted_only: bool = False) -> None:
        """One piece of text: a question, a turn, a statement, advice or a short answer phrase."""
        text = text.strip().strip(",;").strip()
        if not text:
            return
        asked = QUESTION.search(text)
        if asked and (quoted or not FIRST_PERSON.search(text[:asked.start()])):
            question = asked.group(1).strip()
            inner = _INNER_QUESTION.search(question, 1)  # 'When asked Who wrote ...?' → 'Who wrote ...?'
            ex.question = ex.question or (question[inner.start():] if inner else question)
            return
        lead, body = lead_words(text)
        role = role_of(f"{hint} {lead}") if not quoted else role_of(_tail_words(hint, 5))
        if hinted_only and (role is None or not re.search(r"\d|[A-Z]", body) and not find_relative_dates(body)):
            return
        said = _SAID.match(body)
        if said and self.is_name(said.group("who")):
            ex.turns.append((said.group("who"), said.group("text").strip(" \"'“”")))
            return
        if FIRST_PERSON.search(body) and len(words(body)) >= 3:
            ex.turns.append((self.speaker_near(hint, after), body))
            return
        who = self.speaker_near(hint, after) if quoted and len(words(body)) >= 3 else None
        if who:  # 'Kira said "She's a dentist ..."': someone's words, first person or not
            ex.turns.append((who, body))
            return
        if is_statement(body, self.is_name):
            around = f"{_tail_words(hint, 6)} {after}"
            if _REMOVED.search(after) or (_REMOVED.search(_tail_words(hint, 3)) and not _HELD.search(after)):
                ex.removed.append(body)
                ex.shows_output = True
            elif _READ.search(around) and not _HELD.search(_tail_words(hint, 3)):
                ex.context.append(body)
            else:
                ex.items.append(body)
                ex.shows_output = True
            return
        if is_advice(body, self.is_name):
            self.advice.append(body)
            return
        n, meta = len(words(body)), bool(set(words(body)) & META)
        labelled = not quoted and role_of(hint) is not None  # 'Gold answer: ...', {"expected": ...}
        subject = bool(lead) and lead.split()[-1].lower() in _ROLE_NOUNS and body[:1].islower()
        if subject and not labelled:  # 'The gold answer lists several items': a sentence about it, not an answer
            return
        if 0 < n <= (16 if labelled or quoted else 8) and (labelled or not meta):
            phrases.append((body.rstrip("."), role))

    def speaker_near(self, before: str, after: str) -> str | None:
        """The name a quoted utterance is attributed to ('Zane said "..."', 'Zane: "..."', '"...", said Zane')."""
        found = [m.group(1) or m.group(m.lastindex or 1) for m in (_SAID_BEFORE.search(before[-60:]),
                                                                    _SAID_AFTER.match(after)) if m]
        names = [n for n in found if self.is_name(n)]
        return names[0] if names else None


# --- helpers ------------------------------------------------------------------------------------


def _json_values(text: str) -> list[tuple[int, int, Any]]:
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


def _section_hints(lines: list[str]) -> list[str]:
    """Each line's section: the label of a header line ('Conversation:') over the lines below it that are indented
    deeper (or bulleted under an unbulleted header); a Markdown quote ('> Q: ...') is a quoted conversation."""
    hints, section, depth, bulleted = [], "", 0, False
    for line in lines:
        indent = len(line) - len(line.lstrip())
        label = _LABEL.match(_BULLET.sub("", line).strip())
        inside = section and (indent > depth or (indent == depth and not bulleted and bool(_BULLET.match(line))))
        hint = section if inside else ""
        if line.lstrip().startswith(">"):
            hint = f"{hint} quoted conversation".strip()
        hints.append(hint)
        if label and not label.group("rest").strip():
            section, depth, bulleted = label.group("label"), indent, bool(_BULLET.match(line))
        elif not inside:
            section = ""
    return hints


def _blocks(text: str) -> list[tuple[int, int, Any]]:
    """JSON values, Markdown tables and YAML-ish blocks of the text, in order and not overlapping."""
    out: list[tuple[int, int, Any]] = []
    for start, end, value in sorted(_json_values(text) + structured_blocks(text), key=lambda b: b[0]):
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
    return " ".join(re.sub(r"([a-z])([A-Z])", r"\1 \2", key).replace("_", " ").replace("-", " ").split())


def _json_examples(value: Any, reader: _Reader) -> list[list[tuple[str, str]]]:
    """The examples in a JSON value: objects holding a question, as (hint, text) fields."""
    if isinstance(value, list):
        return [fields for v in value for fields in _json_examples(v, reader)]
    if not isinstance(value, dict):
        return []
    fields = _json_fields(value, "", reader)
    nested = [f for v in value.values() if _holds_examples(v) for f in _json_examples(v, reader)]
    if any(QUESTION.search(text) or _asks_without_mark(text) for _, text in fields):
        return [fields, *nested]
    reader.advice += [s for _, text in fields for s in _sentences(text) if is_advice(s, reader.is_name)]
    return nested


def _holds_examples(value: Any) -> bool:
    """Whether a JSON list holds examples (objects, one of them asking a question), not parts of one."""
    return isinstance(value, list) and any(isinstance(x, dict) and any(QUESTION.search(t) or _asks_without_mark(t)
                                                                       for t in _strings(x)) for x in value)


def _asks_without_mark(text: str) -> bool:
    return bool(re.match(r"^(when|what|where|who|which|how)\b", text.strip(), re.I)) and len(words(text)) >= 3


def _json_fields(obj: dict, prefix: str, reader: _Reader) -> list[tuple[str, str]]:
    """(hint, text) leaves of one example object; a name next to a first-person text becomes 'Name: text'."""
    direct = {k: v for k, v in obj.items() if isinstance(v, (str, int, float)) and not isinstance(v, bool)}
    texts = {k: str(v) for k, v in direct.items()}
    names = [k for k, v in texts.items() if len(v.split()) <= 2 and all(reader.is_name(t) for t in v.split())
             and role_of(_key_words(k)) is None and _key_words(k).lower() not in LABEL_WORDS]
    said = TURN_CONTEXT.search(prefix)  # under 'evidence' / 'turns': every text next to a name is its words
    spoken = [k for k, v in texts.items() if k not in names and not _TURN.match(v) and
              (FIRST_PERSON.search(v) or (said and len(words(v)) >= 3))]
    out: list[tuple[str, str]] = []
    order = list(texts)
    used = set()
    for k in spoken if names else []:  # the name next to the utterance is its speaker
        who = min(names, key=lambda n: (abs(order.index(n) - order.index(k)), order.index(n) > order.index(k)))
        out.append((f"{prefix} {_key_words(k)}", f"{texts[who]}: {texts.pop(k)}"))
        used.add(who)
    for who in used:
        texts.pop(who)
    for k, v in texts.items():
        text = f"{v.rstrip('?')}?" if _asks_without_mark(v) and "?" not in v else v
        out.append((f"{prefix} {_key_words(k)}", text))
    pairs = _old_new(obj)
    for k, v in obj.items():
        if isinstance(v, dict):
            out += _json_fields(v, f"{prefix} {_key_words(k)}", reader)
        elif isinstance(v, list) and not any(isinstance(x, dict) for x in v):
            out += [(f"{prefix} {_key_words(k)}", str(x)) for x in v if str(x).strip()] or \
                [(f"{prefix} {_key_words(k)}", "")]
        elif isinstance(v, list) and not _holds_examples(v):  # parts of this example, e.g. its turns
            out += [f for x in v if isinstance(x, dict) for f in _json_fields(x, f"{prefix} {_key_words(k)}", reader)]
    if pairs:
        old, new = pairs
        out = [f for f in out if f[1] not in (old, new)] + [("", f'"{old}" was replaced by "{new}"')]
    return out


def _old_new(obj: dict) -> tuple[str, str] | None:
    old = [v for k, v in obj.items() if isinstance(v, str) and re.search(r"before|old|previous|had|was", k, re.I)]
    new = [v for k, v in obj.items() if isinstance(v, str) and re.search(r"after|new|now|became|replac", k, re.I)]
    return (old[0], new[0]) if len(old) == 1 and len(new) == 1 else None


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!])\s+|\n+", text) if s.strip()]


def _tail_words(text: str, n: int) -> str:
    return " ".join(text.split()[-n:])


def read_feedback(text: str) -> Reading:
    """The examples (one per question) and the general advice of a feedback text, in any format."""
    text = normalize(text)
    return _Reader(text).read(text)
