"""What an example claims, read from the kind of error it names and the values it quotes, whatever its wording.

The reader (`memopt.simlm.examples`) sorts an example's parts by the words around them; a layout it does not know
can leave the question's answers unread or a turn without its speaker, and `memopt.simlm.diagnosis` then sees no
loss. Every rendering still writes the *values* verbatim (the question, the answers, the turns, what the memory held,
the spans its comment quotes) and names the error type in some spelling ('ExtractionError', 'EXTRACTION_ERROR',
'extraction-error'). `claimed` reads those by their shape, not by any label, and infers the loss from which values
are present and how they relate:

- an extraction error: a relative date ('yesterday') a statement of the memory (or a turn) keeps, for a question
  asking when (or a dated value); a name the question asks about or a turn's speaker, named in no statement the
  memory held; a quoted span (else a short value) a turn holds and no statement of the memory does;
- an update error quoting two statements: the one about the question was replaced by the other; a deletion error
  quoting one: it was removed;
- a response error whose values include a declining answer ('Not mentioned'): it should have abstained; one whose
  values list several items and another value gives only some of them: a partial answer.

It is the reflection's fallback (`memopt.simlm.reflect.read_evidence`) when the parts as read show no loss the
operation could cause. It reads only the example's own text.
"""

from __future__ import annotations

import re

from memopt.core.text import find_relative_dates, has_absolute_date, overlap, stems, words
from memopt.simlm.answering import analyze, is_abstention
from memopt.simlm.example_parts import FIRST_PERSON, NOT_NAMES, Example, holds, is_statement

__all__ = ["claimed", "error_kind", "names_in", "quoted_spans", "values"]

Finding = tuple[float, str]

_ERROR = re.compile(r"(?i)(extraction|extract|update|deletion|delete|retrieval|response)[\s_.\-]*(?:error|failure)")
_KIND = {"extraction": "extraction", "extract": "extraction", "update": "update", "deletion": "deletion",
         "delete": "deletion", "retrieval": "retrieval", "response": "response"}
_SPAN = re.compile(r"<!\[CDATA\[(.*?)\]\]>|(?<!\w)'((?:[^'\n]|\b'\b){2,300}?)'(?!\w)|\"([^\"\n]{2,300}?)\"|"
                   r"“([^”\n]{2,300}?)”|‘([^’\n]{2,300}?)’|«\s*([^»\n]{2,300}?)\s*»|『([^』\n]{1,300}?)』|"
                   r"「([^」\n]{1,300}?)」|‹([^›\n]{1,300}?)›|„([^“”\n]{1,300}?)[“”]|`([^`\n]{1,300}?)`")
_SEPARATOR = re.compile(r"\s*(?:\n|[|‖│•·;→⇒=<>{}\[\]()]|->|=>|:\s|：|—|\t|\.\s+(?=[A-Z])|\b[A-Z]\w*\(|"
                        r"\s[^\w\s'\"“”‘’«»()\[\],.?!]{1,3}\s)\s*")  # ' ~ ', ' >> ': a column's edge; 'Str(...)'
# a turn led by who says it: 'Zane ~ I went ...', 'Alex dedi ki: My ...', 'Zane, in chat -- I ...'
_LED = re.compile(r"^([A-Z][\w'-]+)(?:,?\s+[^\W\d]+){0,3}?\s*(?:[^\w\s'\"“”(,.]{1,3}|\([^)]{0,30}\))\s*(?=\S)")

_NAME = re.compile(r"\b[A-Z][a-z][\w'-]*")
_DATE_WORDS = stems("yesterday today last week weekend month year ago monday tuesday wednesday thursday friday "
                    "saturday sunday")


def error_kind(text: str) -> str | None:
    """The kind of error an example names, in any spelling ('UpdateError', 'UPDATE_ERROR', 'update error')."""
    found = _ERROR.search(text)
    return _KIND[found[1].lower()] if found else None


def quoted_spans(text: str) -> list[str]:
    """The spans a text quotes, in any quotation marks (and CDATA sections), and the spans they quote."""
    spans = [next(g for g in m.groups() if g is not None).strip() for m in _SPAN.finditer(text)]
    return [s for span in spans for s in (span, *(quoted_spans(span) if span != text else ()))]  # and within


def values(text: str) -> list[str]:
    """Every value a text writes: its quoted spans and the pieces between its separators (lines, cells, arrows,
    labels), without their quotation marks; in order, once each."""
    pieces = [p.strip(" \t\"'“”‘’«»『』「」‹›„`()*#-.,!?") for p in _SEPARATOR.split(_SPAN.sub(" | ", text))]
    return list(dict.fromkeys(s for s in [*quoted_spans(text), *pieces] if s and words(s)))


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"\b{re.escape(name)}\b", text) is not None


def _about(statement: str, turn: str) -> bool:
    return overlap(stems(turn) - _DATE_WORDS, stems(statement)) >= 0.3


def _statement(text: str) -> bool:
    """A third-person sentence of the memory (not someone's words, not a question)."""
    return len(words(text)) >= 3 and not FIRST_PERSON.search(text) and not text.rstrip().endswith("?") and \
        bool(_NAME.search(text))


def names_in(ex: Example) -> set[str]:
    """The names an example uses: the question's, the speakers the reader found, and the capitalised words it writes
    after a lower-case word ('with my cousin Emma'), as an owner ('Alex's') or more than once, and never in lower
    case (a capital that starts one sentence is no name)."""
    mid = {m[1] for m in re.finditer(r"(?<=[a-z,] )([A-Z][a-z][\w-]*)", ex.text)}
    capitals = re.findall(r"\b[A-Z][a-z][\w-]*(?:'s)?", ex.text)
    owners = {c.removesuffix("'s") for c in capitals if c.endswith("'s")}  # 'Alex's aunt'
    twice = {c for c in capitals if capitals.count(c) > 1}
    lower = set(re.findall(r"\b[a-z][\w-]*", ex.text))
    return {n for n in mid | owners | twice if n.lower() not in NOT_NAMES and n.lower() not in lower} | \
        set(analyze(ex.question).names) | {w for w, _ in ex.turns if w}


_SAYS = re.compile(r"(?:^\s*|(?<=[\s\[(|/]))(?P<who>[A-Z][a-z][\w'-]*)(?:,?\s+[^\W\d]+){0,3}?\s*(?:[:|~>»›\])]|--|—)\s*"
                   r"(?P<said>[^\s|].{8,}?)[\s\]}).\"”»]*$")  # 'eval/turn-1: Priya | She's a dentist ...'


def _led_words(line: str, names: set[str]) -> re.Match | None:
    """The first place on a line where a name leads someone's words ('Turn: [Alex] omg ...', 'Priya | She's ...')."""
    return next((m for n in _NAME.finditer(line) if (m := _SAYS.match(line, n.start())) and m["who"] in names), None)


def _turns(ex: Example, found: list[str], names: set[str]) -> list[tuple[str | None, str]]:
    """The turns as read and the lines where a name leads someone's words ('Priya | She's ...', 'Alex dedi ki: My
    ...'), else the values that are someone's own words; each with the name that leads it or is written just before
    it on its line, when the reader gave none."""
    turns = list(ex.turns)
    quoted = [(m.start(), m.end(), next(g for g in m.groups() if g is not None).strip())
              for m in _SPAN.finditer(ex.text)]
    paired = [(a[2], b[2]) for a, b in zip(quoted, quoted[1:], strict=False)  # '{who = "Alex", text = "omg ..."}'
              if a[2] in names and b[0] - a[1] <= 24 and "\n" not in ex.text[a[1]:b[0]]]
    led = [m for m in map(lambda line: _led_words(line, names), ex.text.splitlines()) if m]
    for who, said in [*paired, *((m["who"], m["said"]) for m in led)]:
        if who in names and len(words(said)) >= 3 and not any(said in t or t in said for _, t in turns):
            turns.append((who, said))
    turns = turns or [(None, v) for v in found if FIRST_PERSON.search(v) and len(words(v)) >= 4]
    out = []
    for who, said in turns:
        led = _LED.match(said)
        if not who and led and led[1] in names:
            who, said = led[1], said[led.end():]
        if not who and said in ex.text:
            before = ex.text[max(0, ex.text.index(said) - 80):ex.text.index(said)].split("\n")[-1]
            who = next((n for n in reversed(_NAME.findall(before)) if n in names), None)
        out.append((who, said))
    return out


def _memory(ex: Example, found: list[str], turns: list[tuple[str | None, str]], names: set[str]) -> list[str]:
    """The third-person statements about someone the example holds, as read or among its values (not a turn, not
    the question)."""
    said = " ".join(t for _, t in turns)
    leads = {m[1] for _, t in turns for m in re.finditer(rf"([^\n:：>~|]{{3,40}}?)\s*\W{{1,3}}\s*{re.escape(t[:24])}",
                                                          ex.text)}  # 'Xavi dedi ki: I ...': who says, no memory
    return list(dict.fromkeys(v for v in [*ex.held, *ex.context, *found] if v.strip() and
                              is_statement(v, lambda t: t.removesuffix("'s") in names) and v not in said and
                              v not in ex.question and not any(v in lead for lead in leads)))


def _extraction(ex: Example, found: list[str], spans: list[str]) -> dict[str, Finding]:
    out: dict[str, Finding] = {}
    names = names_in(ex)
    turns = _turns(ex, found, names)
    memory = _memory(ex, found, turns, names)
    q = analyze(ex.question)
    when = q.kind == "when" or bool(ex.gold and has_absolute_date(ex.gold))
    relative = [t for _, t in turns if find_relative_dates(t)]
    kept = [s for s in memory if find_relative_dates(s) and (any(_about(s, t) for t in relative) or not relative)]
    if when and kept:
        out["memory_date_relative"] = (1.0, kept[0])
    elif when and relative:
        out["memory_date_relative"] = (0.5, relative[0])
    held = " ".join(memory)
    speakers = [w for w, _ in turns if w] + sorted(q.names)
    if turns and (memory or ex.shows_output) and any(not _mentions(held, n) for n in speakers):
        out["speaker_dropped"] = (1.0, next(t for _, t in turns))
    short = [v for v in [*spans, *(ex.gold and [ex.gold] or [])] if 0 < len(words(v)) <= 5 and
             not is_abstention(v) and (v != ex.answer or v in spans) and not find_relative_dates(v)]
    for detail in short:
        source = next((t for _, t in turns if holds(t, detail) and t != detail), None)
        if source and not any(holds(s, detail) for s in memory):
            out["detail_cut"] = (1.0 if any(_about(s, source) for s in memory) else 0.5, detail)
            break
    return out


def _changes(ex: Example, kind: str, spans: list[str]) -> dict[str, Finding]:
    statements = [s for s in dict.fromkeys(spans) if _statement(s)]
    q_stems = stems(ex.question)

    def about(s: str) -> bool:
        return (bool(ex.gold) and holds(s, ex.gold or "")) or overlap(q_stems, stems(s)) >= 0.5

    old = next((s for s in statements if about(s)), None)
    if old is None:
        return {}
    if kind == "update" and any(s != old and not about(s) for s in statements):
        return {"compatible_overwritten": (1.0, old)}
    return {"unrelated_deleted": (1.0, old)} if kind == "deletion" else {}


def _response(ex: Example, found: list[str], spans: list[str]) -> dict[str, Finding]:
    declined = [v for v in found if is_abstention(v) and len(words(v)) <= 4]
    quoted = [v for v in spans if is_abstention(v) and len(words(v)) <= 4]  # 'should have been 'Not mentioned''
    if quoted or declined and not (ex.answer and is_abstention(ex.answer) and ex.gold and not is_abstention(ex.gold)):
        return {"should_abstain": (1.0, (quoted or declined)[0])}
    for listed in found:
        items = [p.strip() for p in re.split(r",|\band\b", listed) if words(p)]
        if len(items) < 2 or not all(len(words(p)) <= 3 for p in items) or has_absolute_date(listed):
            continue
        for given in found:  # a short value that gives some of the items, not all: 'got Rocky' for 'Rocky, Milo'
            some = [p for p in items if holds(given, p)]
            if given != listed and len(words(given)) <= 6 and some and len(some) < len(items):
                return {"partial_answer": (1.0, listed)}
    return {}


def claimed(ex: Example) -> dict[str, Finding]:
    """The losses an example claims, from the error type it names and the values it writes (see the module)."""
    kind = error_kind(ex.text)
    if not kind or not ex.text:
        return {}
    found, spans = values(ex.text), quoted_spans(ex.text)
    if kind == "extraction":
        return _extraction(ex, found, spans)
    if kind in ("update", "deletion"):
        return _changes(ex, kind, spans or found)
    if kind == "response":
        return _response(ex, found, spans)
    return {}
