"""Editing a prompt the way a person would: a new rule rewrites the sentences it contradicts, in place.

`sentence_spans(text)` finds the sentences of a prompt with their character spans (a list marker,
"1." or "-", and a short label such as "Delete:" or "[IMPORTANT]:" stay outside the span). Two
sentences *conflict* (`conflicts`) on a directive of the catalogue (`memopt.simlm.directives`) when

- they state it with opposite stances ("Create the facts based on the user messages only" against
  "Extract facts about every participant, not only the user"), or
- one restricts an action the other states a broader rule for: a new rule "Delete a memory only when
  the new fact explicitly retracts it" against "If the facts contradict the memory, delete it" (a
  conditional rule on the same action, ``SCOPED``), or a rule that now covers every speaker against
  an extraction sentence about "the user" only.

`edit(prompt, sentence, kind)` applies one new rule: the first sentence it conflicts with is
replaced by it (label and list marker kept), a sentence that only names "the user" is widened in
place ("about each speaker"), the other conflicting sentences are removed, and so are the examples
("Example (a): if ..., then update the memory") that illustrate a rule the new one narrowed; with no conflict the
rule becomes the next item of the prompt's rule list (the list under a heading such as
"Remember the following:" or "# INSTRUCTIONS", else the last list), else a line at the end. The
rest of the prompt (sections, few-shot examples, output format) is kept byte for byte.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memopt.simlm import directive_stances, quote_mask

__all__ = ["Span", "Edit", "sentence_spans", "conflicts", "edit", "is_fragment"]

_MARKER = re.compile(r"^(\s*(?:[-*•]|\d+[.)])\s+)")
_LABEL = re.compile(r"^((?:\[[A-Z ]{2,20}\]|[A-Z][\w-]*(?: (?:[A-Z][\w-]*|\([a-z0-9]\)|and|of)){0,4}):\s+)(?=\S)")
_END = re.compile(r"[.!?]+(?=\s|$)")
_ABBREV = re.compile(r"\b(?:e\.g|i\.e|etc|vs|approx|cf)\.", re.IGNORECASE)
_HEADING = re.compile(r"instruction|rule|guideline|remember|important|note", re.IGNORECASE)
_EXAMPLE = re.compile(r"^\s*(?:for example|for instance|e\.g|example\b)", re.IGNORECASE)
_CONDITION = re.compile(r"\b(?:if|when|whenever)\b", re.IGNORECASE)
_ONE_PARTY = re.compile(r"\babout the user(?:'s)?\b(?! and)(?! or)", re.IGNORECASE)
_EXTRACTING = re.compile(r"\b(?:extract|generate|create|record|store|remember)\w*\b.*\b(?:facts?|information|"
                         r"details|preferences)\b", re.IGNORECASE)
# directive → the action a conditional rule states and a restricting rule narrows
SCOPED = {"delete_only_explicit": re.compile(r"\b(?:delet\w*|remov\w*)\b", re.IGNORECASE),
          "update_on_contradiction": re.compile(r"\bupdat\w*\b|\boverwrit\w*\b|\breplac\w*\b", re.IGNORECASE)}
_NEGATION = re.compile(r"\b(?:not|never|no|don't|do not|without)\b", re.IGNORECASE)


_VERBS = frozenset("""
is are be was were been being am do does did have has had should must can could will would may might shall need needs
ought let keep drop make use avoid write ignore remove shorten focus treat replace extract delete include omit leave
prefer record add skip list state mention resolve convert combine give return say limit cut merge update expand
answer reply respond store create generate track note remember recall monitor maintain think check double-check
look examine formulate ensure pay compare decide put provide compute calculate mark copy abstain anchor cover pull
turn rewrite count consider identify find select choose split preserve retain attribute describe summarise summarize
organize organise detect reveal pick capture bring date rank search query ask tell see get go take""".split())


def is_fragment(sentence: str) -> bool:
    """Whether a sentence has no verb ("Only part of them."): a fragment, not an instruction."""
    tokens = re.findall(r"[a-z][a-z'-]*", sentence.lower())
    return not any(t in _VERBS or t.endswith("n't") or len(t) > 5 and t.endswith(("ing", "ed", "ise", "ize"))
                   for t in tokens)


@dataclass(frozen=True)
class Span:
    """One sentence of a prompt: its text and where it stands (``start``/``end`` in the prompt)."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Edit:
    """A prompt after one edit, and a one-line rationale of what changed."""

    prompt: str
    change: str


def sentence_spans(text: str) -> list[Span]:
    """The sentences of ``text`` with their spans; list markers and short labels stay outside."""
    spans: list[Span] = []
    pos = 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        start = len(m.group(1)) if (m := _MARKER.match(body)) else 0
        if (m := _LABEL.match(body[start:])) and len(body) - start - len(m.group(1)) > 20:
            start += len(m.group(1))
        masked = _ABBREV.sub(lambda a: "x" * len(a.group()), body)
        quoted = quote_mask(body)
        for m in _END.finditer(masked):
            if m.start() >= start and not quoted[m.start()]:
                _add(spans, body, pos, start, m.end())
                start = m.end()
        _add(spans, body, pos, start, len(body))
        pos += len(line)
    return spans


def _add(spans: list[Span], line: str, offset: int, start: int, end: int) -> None:
    piece = line[start:end]
    lead = len(piece) - len(piece.lstrip())
    piece = piece.strip()
    if re.search(r"[A-Za-z]", piece):
        spans.append(Span(offset + start + lead, offset + start + lead + len(piece), piece))


def _scoped(directive: str, sentence: str) -> bool:
    """Whether ``sentence`` states a conditional rule for the action ``directive`` restricts."""
    action = SCOPED.get(directive)
    if action is None or _EXAMPLE.match(sentence) or not _CONDITION.search(sentence):
        return False
    found = action.search(sentence)
    return bool(found) and not _NEGATION.search(sentence[max(0, found.start() - 25):found.start()])


def _one_party(sentence: str) -> bool:
    return bool(_ONE_PARTY.search(sentence) and _EXTRACTING.search(sentence))


def conflicts(kind: str, rule: str, other: str) -> list[str]:
    """The directives on which the sentence ``other`` conflicts with the sentence ``rule`` (see the module doc)."""
    new, old = directive_stances(kind, rule), directive_stances(kind, other)
    found = [d for d, s in new.items() if old.get(d) == -s]
    for d, s in new.items():
        if d in found or old.get(d):
            continue
        if s > 0 and (_scoped(d, other) and "only" in rule.lower()
                      or d == "all_participants" and _one_party(other)):
            found.append(d)
    return found


def _widen(sentence: str) -> str:
    return _ONE_PARTY.sub("about each speaker", sentence)


def _remove(text: str, span: Span) -> str:
    line_start = text.rfind("\n", 0, span.start) + 1
    line_end = text.find("\n", span.end)
    line_end = len(text) if line_end < 0 else line_end
    rest = (text[line_start:span.start] + text[span.end:line_end]).strip()
    if not rest or _MARKER.fullmatch(rest + " ") or _LABEL.fullmatch(rest + " "):
        return text[:line_start] + text[min(len(text), line_end + 1):]
    before = text[:span.start].rstrip(" ")
    after = text[span.end:].lstrip(" ")
    joiner = " " if before and not before.endswith("\n") and after and not after.startswith("\n") else ""
    return before + joiner + after


def _insert(text: str, sentence: str) -> str:
    lines = text.split("\n")
    blocks: list[tuple[int, int, str]] = []  # (first line, last line, heading)
    heading, i = "", 0
    while i < len(lines):
        if _MARKER.match(lines[i]):
            j = i
            while j + 1 < len(lines) and _MARKER.match(lines[j + 1]):
                j += 1
            blocks.append((i, j, heading))
            i = j + 1
            continue
        if lines[i].strip():
            heading = lines[i]
        i += 1
    if not blocks:
        return text.rstrip() + "\n" + sentence + ("\n" if text.endswith("\n") else "")
    ruled = [b for b in blocks if _HEADING.search(b[2])]
    first, last, _ = (ruled or blocks)[-1]
    marker = _MARKER.match(lines[last]).group(1)  # type: ignore[union-attr]
    if (number := re.match(r"(\s*)(\d+)([.)])", marker)) is not None:
        marker = f"{number.group(1)}{int(number.group(2)) + 1}{number.group(3)} "
    lines.insert(last + 1, marker + sentence)
    return "\n".join(lines)


def _examples_of(prompt: str, spans: list[Span], rules: list[Span], sentence: str, kind: str
                 ) -> list[tuple[Span, list[str]]]:
    """The examples on the line of a conditional rule the new rule narrows that apply the old rule's action."""
    found = []
    for directive, action in SCOPED.items():
        if directive_stances(kind, sentence).get(directive, 0) <= 0 or "only" not in sentence.lower():
            continue
        lines = {prompt.count("\n", 0, r.start) for r in rules if _scoped(directive, r.text)}
        for span in spans:
            hit = action.search(span.text)
            if span not in rules and _EXAMPLE.match(span.text) and prompt.count("\n", 0, span.start) in lines \
                    and hit and not _NEGATION.search(span.text[max(0, hit.start() - 25):hit.start()]):
                found.append((span, [directive]))
    return found


def edit(prompt: str, sentence: str, kind: str) -> Edit:
    """``prompt`` with the rule ``sentence`` applied in place (see the module docstring)."""
    sentence = sentence.strip()
    spans = sentence_spans(prompt)
    if any(s.text == sentence for s in spans):
        return Edit(prompt, "")
    clashing = [(s, conflicts(kind, sentence, s.text)) for s in spans]
    clashing = [(s, found) for s, found in clashing if found]
    clashing += _examples_of(prompt, spans, [s for s, _ in clashing], sentence, kind)
    clashing.sort(key=lambda item: item[0].start)
    if not clashing:
        return Edit(_insert(prompt, sentence), f"added: {sentence}")
    replaced = next((s for s, found in clashing if not _one_party(s.text) or directive_stances(kind, s.text)), None)
    text = prompt
    for span, _ in reversed(clashing):  # from the end, so earlier spans keep their offsets
        if span is replaced:
            text = text[:span.start] + sentence + text[span.end:]
        elif _one_party(span.text) and not directive_stances(kind, span.text):
            text = text[:span.start] + _widen(span.text) + text[span.end:]
        else:
            text = _remove(text, span)
    directives = sorted({d for _, found in clashing for d in found})
    what = f"replaced {replaced.text!r} with {sentence!r}" if replaced else f"widened to every speaker ({sentence!r})"
    others = len(clashing) - (replaced is not None)
    tail = f"; rewrote or removed {others} other sentence(s) it contradicts" if others else ""
    return Edit(text if replaced else _insert(text, sentence), f"{what}{tail} ({', '.join(directives)})")
