"""Read the examples in reflection feedback the way a person would, whatever their format.

Feedback is free text: labelled lines ('Question:', 'Q:', 'Asked:', 'Correct answer =>', 'Question -'),
JSON, tables, key=value logs, diffs, YAML-ish ``key: value`` blocks, bulleted lists, plain prose, other languages'
words and punctuation. `memopt.simlm.example_layouts` writes every layout as labelled lines (a record is a
paragraph of 'key: value' lines); `read_feedback` finds the examples in them (one per question asked) and sorts
the pieces of each by what they *are*, not by the labels around them:

- the question: a sentence ending with '?' (or a JSON value starting with a question word) that is
  not a line of dialogue;
- source turns: 'Name: text', a sentence in quotes attributed to someone ('Zane said "I went there
  yesterday"', '"...", Zane wrote', 'Zane had told them: "..."'), a first-person sentence in quotes, or a
  JSON object holding a name and a text. A word that labels questions or answers ('Q', 'A', 'Asked') is
  a speaker only where the context says so: under an 'Evidence:' / 'Conversation:' header, in a '> '
  quote, or when its text is someone's first-person words;
- statements: third-person sentences about a named person, a leading date phrase allowed ('the week
  before 3 July 2023 Zane went ...'): what an operation produced, stored or read. Next to a word of
  replacing ("replaced", "overwritten", "became", "→") two quoted sentences make an old/new pair when
  one is a statement and neither is someone's first-person words; next to a word of removal
  ("deleted", "removed") a statement was removed; next to a word of looking up ("retrieved", "read",
  "context", "search") it was read at question time;
- short phrases: the answers (a phrase under a label that names an answer is one, even if it starts
  like a sentence about someone: 'Gold answer: Perseid meteor shower'). The one a person calls
  expected ("expected", "gold", "should have been", "correct") is the gold answer, the one called
  answered or got is the system's; without such words, the one that answers the question (an
  absolute date for a "when" question, the one the source turns support, a real answer when the
  question's person said it) is the gold, else the first;
- the error type and the blamed operation: a field labelled 'error' / 'type' / 'cause' or 'op' / 'stage' /
  'blamed', or, in a sentence, a CamelCase word ending in 'Error' and a dotted id after 'blamed on' (kept on
  the example as written; diagnosis does not use them);
- advice: general instruction sentences that are not about one example ("Facts should be short.").

Only generic English role words and shapes are read (a person's "expected", "said", "stored"), never a
particular tool's section labels or a list of error-type names or operation ids; a name is a capitalised
word that the feedback never writes in lower case.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memopt.core.text import find_relative_dates, words
from memopt.simlm.example_layouts import as_lines, key_words
from memopt.simlm.example_parts import (
    CUES,
    FIRST_PERSON,
    LABEL_WORDS,
    NOT_NAMES,
    QUESTION,
    QUOTE,
    WORDS,
    Example,
    assign_answers,
    is_advice,
    is_statement,
    label_side,
    lead_words,
    replacement,
    role_of,
    unquoted_removal,
    unquoted_replacement,
)

__all__ = ["Reading", "read_feedback"]

TURN = re.compile(r"^(?P<who>[A-Z][\w'-]*(?: [A-Z][\w'-]*)?)\s*(?:\([^)]{0,30}\))?:\s+(?P<text>\S.*)$")  # 'Name: text'
ERROR_NAME = re.compile(r"\b[A-Z][a-z]+(?:[A-Z][a-z]+)*(?:Error|Failure|Fault)\b")
_OP_NAME = re.compile(r"\b(?:blamed on|blame falls on|blame goes to|caused by|fault of|in|at)\s+(?:the\s+)?"
                      r"([a-z][\w-]*\.[a-z][\w.-]*)")
_BULLET = re.compile(r"^\s*(?:[-*•+>]+|\d+[.)]|\(\w\))\s+")
_LABEL = re.compile(r"^(?P<label>[A-Za-z][\w '/()#.-]{0,40}?)\s*(?:[:=]|\s[-–—]+>?(?=\s)|=>)\s*(?P<rest>.*)$")
_SAID = re.compile(r"^(?P<who>[A-Z][\w'-]*)\s+(?:said|says|told \w+|wrote|mentioned|explained)\s*[:,]?\s+(?P<text>.+)$")
_SAID_BEFORE = re.compile(r"\b([A-Z][\w'-]*)\s*(?:\([^)]{0,30}\))?\s*"
                          r"(?:(?:had|has|have|once|then|also|earlier|\w+ly)\s+)?"
                          r"(?:(?:said|says|wrote|writes|asked|mentioned|explained|replied|told \w+)\b[^\"“]{0,15}|"
                          r":\s*)$|\b([A-Z][\w-]*)'s(?:\s+[a-z]+)?\s*[:,]?\s*$")  # "Xavi's message: '...'"
_SAID_AFTER = re.compile(r"^\W{0,3}\s*(?:(?:said|says|wrote|asked|replied)\s+|[—-]\s*|\()([A-Z][\w'-]*)|"
                         r"^\W{0,3}\s*([A-Z][\w'-]*)\s+(?:had\s+)?(?:said|says|wrote|writes|replied|added|told)\b")
_INNER_QUESTION = re.compile(r"(?<=\s)(?:When|What|Where|Who|Whom|Whose|Which|Why|How|Did|Does|Do|Is|Are|Was|"
                             r"Were|Has|Have|Had|Can|Could|Will|Would)\b")
_SEPARATORS = re.compile(r"\s+\|\s+|\s+/\s+|\s*\n\s*")
_CLAUSES = re.compile(r";\s+|(?<=[.!])\s+(?=[A-Z\"“'])|,\s+(?=(?:but\s+|and\s+|while\s+|whereas\s+)?(?:got|answered|"
                      r"expected|gold|the system|the model|it said|it answered|should|instead|predicted|correct|"
                      r"(?:the\s+)?(?:right|correct|expected|real|true)?\s*answer)\b)", re.I)
_HOLDING = re.compile(r"^(?P<lead>(?:\w+\W+){0,6}?(?:held|holds|contained|contains|had|has|stored|stores|kept|keeps|"
                      r"produced|produces|read|reads|retrieved|returned|saved|recorded)(?:\s+only)?\s*:?)\s+"
                      r"(?P<rest>.+)$", re.I)

_REMOVED = CUES["removal"]
_REPORTED = re.compile(r"^\S+\s+(?:\w+ly\s+|had\s+|has\s+)?(?:said|says|asked|asks|wrote|writes|replied|told)$")
_REQUEST = re.compile(r"(?:could|can|would|will|do|should|shall|may|might)\s+(?:you|we)\b", re.I)
_LABEL_HEAD = re.compile(r"(?:\s+[\w'-]+){0,3}\s*(?:\([^)\n]{0,30}\))?\s*:")  # 'Impact:', 'Erwartet (expected):'
_HEADING = re.compile(r"^\s*#{1,6}\s+((?:[A-Za-z][\w'/-]*\s*){1,4})$")  # '### Expected': a section of its own
_READ, _HELD, _TURN = CUES["read"], CUES["held"], CUES["turn"]
_ROLES = ("asked", "gold", "answered", "turn", "held", "read", "old", "new")


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
        self.named = {m.group(0).removesuffix("'s") for m in re.finditer(r"\b[A-Z][\w'-]*", text)
                      if not _LABEL_HEAD.match(text, m.end())}  # capitalised words used elsewhere than as a label
        self.advice: list[str] = []

    def is_name(self, token: str) -> bool:
        """A capitalised word that is no role word and that the feedback never writes in lower case."""
        token = token.removesuffix("'s")
        return bool(token[:1].isupper()) and token.lower() not in NOT_NAMES and token.lower() not in self.lower

    def is_label(self, label: str, rest: str, hint: str) -> bool:
        """Whether 'label: rest' is a labelled field (not a turn of someone named like the label, nor an id: 'D6:1',
        nor someone's words reported: 'Someone asked: ...')."""
        first = label.split()[0]
        reported = self.is_name(first) and _REPORTED.match(label)
        return not reported and (not self.is_name(first) or not (self.speaker(first, rest, hint) or
                                                                   re.search(r"\d", label)))

    def speaker(self, who: str, text: str, hint: str = "") -> bool:
        """Whether 'who: text' is a turn of the conversation: a name used as one elsewhere in the feedback, or any
        name when the words around say it is a turn or the text is someone's words; for a word that labels questions
        or answers ('Q', 'A', 'Asked'), only a name in those two cases, and not for a question."""
        if not self.is_name(who):
            return False
        if who.lower() not in LABEL_WORDS:  # the text's own words, not those it quotes ('Trigger: Xavi's "I ..."')
            own = text if QUOTE.fullmatch(text.strip()) else QUOTE.sub(" ", text)
            return all(w in self.named for w in who.split()) or bool(_TURN.search(hint) or "blockquote" in hint or
                                                                      FIRST_PERSON.search(own))
        return bool(_TURN.search(hint)) or (bool(FIRST_PERSON.search(text)) and not QUESTION.search(text))

    # --- blocks ---------------------------------------------------------------------------------

    def read(self, text: str) -> Reading:
        """A paragraph asking questions holds one example per question; one asking none goes on with the example
        before it, or gives advice."""
        segments: list[list[tuple[str, str]]] = []
        for paragraph in re.split(r"\n\s*\n", text):
            lines = [line for line in paragraph.splitlines() if line.strip()]
            hints = _section_hints(lines)
            starts = self.starts(lines, hints, segments[-1] if segments else [])
            if not starts:
                said = _sentences(paragraph)
                advice = [s for s in said if is_advice(s, self.is_name)]
                if segments and len(advice) < len(said):  # an example told over several paragraphs goes on
                    segments[-1] += list(zip(hints, lines, strict=True))
                else:
                    self.advice += advice
                continue
            cuts = [0, *starts[1:], len(lines)]
            segments += [list(zip(hints[a:b], lines[a:b], strict=True)) for a, b in zip(cuts, cuts[1:], strict=False)]
        examples = [self.example(fields) for fields in segments]
        return Reading([e for e in examples if e.question], list(dict.fromkeys(self.advice)))

    def starts(self, lines: list[str], hints: list[str], previous: list[tuple[str, str]]) -> list[int]:
        """The lines that start an example: those asking a question, but not the same question again (a ticket's
        title and its steps ask it twice)."""
        out: list[int] = []
        last = _asked(" ".join(text for _, text in previous)) if previous else None
        for i, line in enumerate(lines):
            if self.asks(line, hints[i]):
                asked = _asked(line)
                if asked is None or asked != last:
                    out.append(i)
                last = asked
        return out

    def asks(self, line: str, hint: str = "") -> bool:
        """Whether a line asks a question (and is not a line of dialogue)."""
        body = _BULLET.sub("", line).strip()
        for _ in range(2):
            turn = TURN.match(body)
            if turn and self.speaker(turn.group("who"), turn.group("text"), hint):
                return False
            label = _LABEL.match(body)
            body = label.group("rest").strip() if label else body
        asked = QUESTION.search(body)
        return bool(asked) and not _REQUEST.match(asked.group(1))

    def example(self, fields: list[tuple[str, str]]) -> Example:
        """One example from its (hint, text) fields; then which short phrase is the gold answer."""
        ex = Example()
        phrases: list[tuple[str, str | None]] = []
        for hint, text in self.paired(fields):
            self.field(ex, phrases, hint, text)
        ex.replaced += list(zip(ex.before, ex.after, strict=False))
        n = min(len(ex.before), len(ex.after))
        ex.items += ex.before[n:] + ex.after[n:]
        assign_answers(ex, phrases)
        return ex

    def paired(self, fields: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """A field holding someone's words ('text: I adopted ...', 'utterance: ...') beside one naming who spoke
        ('speaker: Xavi', 'said_by: Xavi, Xavi') is their turn, one per name when it names several."""
        out, used = list(fields), set()
        label = [_LABEL.match(_BULLET.sub("", text).strip()) for _, text in fields]
        names = [self.names(m["rest"]) if m and _speakers_key(m["label"]) else [] for m in label]
        for j, m in enumerate(label):
            i = next((i for i in (j - 1, j + 1) if 0 <= i < len(out) and names[i] and i not in used), None)
            if m and not names[j] and i is not None and role_of(m["label"]) is None and \
                    self.utterance(m["rest"], f"{fields[j][0]} {m['label']} {label[i]['label']}"):
                said = "\n".join(f"{n}: {t}" for n, t in _spoken(names[i], m["rest"]))
                out[j], out[i] = (f"{fields[j][0]} {m['label']} said", said), (fields[i][0], "")
                used.add(i)
        return out

    def names(self, value: str) -> list[str]:
        """The names a value lists ('Xavi', 'Xavi / Gina', 'Xavi, Xavi'), each of at most two words; else none."""
        found = [n.strip() for n in re.split(r"\s*(?:[/,;&]|\band\b)\s*", value) if n.strip()]
        ok = found and not ERROR_NAME.search(value) and all(
            len(n.split()) <= 2 and all(self.is_name(t) for t in n.split()) for n in found)
        return found if ok else []

    def utterance(self, text: str, hint: str) -> bool:
        """Whether a field's text is someone's words: a few words, first person or under words of a turn."""
        return len(words(text)) >= 3 and not TURN.match(text) and bool(FIRST_PERSON.search(text) or (
            _TURN.search(hint) and not QUESTION.search(text)))

    # --- fields ---------------------------------------------------------------------------------

    def field(self, ex: Example, phrases: Phrases, hint: str, text: str) -> None:
        """A line or JSON value: its label joins the hint; lists, turns, quotes and clauses are read in turn."""
        text = _BULLET.sub("", text).strip()
        if not text:
            return
        error, operation = error_or_op(hint, text, labelled=True) if hint.strip() else (None, None)
        for depth in range(2):  # a label, and a word of a role labelling its value ('Stage I/O: out: ...')
            label = None if error or operation else _LABEL.match(text)  # 'Type: ExtractionError: ...' stays whole
            if not (label and '"' not in label.group("label") and len(label.group("label").split()) <= 5 and
                    self.is_label(label.group("label"), label.group("rest"), hint)) or \
                    depth and not any(CUES[r].fullmatch(key_words(label["label"])) for r in _ROLES):
                break
            if not label.group("rest").strip():
                return
            hint, text = f"{hint} {key_words(label.group('label'))}", label.group("rest").strip()
            if _HELD.search(hint) and not _READ.search(hint):
                ex.shows_output = True
            error, operation = error_or_op(hint, text, labelled=True)
        if error or operation:
            ex.error, ex.operation = ex.error or error, ex.operation or operation
            if operation or ERROR_NAME.match(text) or len(text.split()) <= 6:
                return  # else a sentence telling what went wrong ('Root cause: the update overwrote ...') is read on
        error, operation = error_or_op("", text)  # named in a sentence: 'blamed on mem0.extract (ExtractionError)'
        ex.error, ex.operation = ex.error or error, ex.operation or operation
        parts = [p for p in _SEPARATORS.split(text) if p.strip()]
        if len(parts) > 1:
            for part in parts:
                self.field(ex, phrases, hint, part)
            return
        inner = re.fullmatch(r"[\"“](.+)[\"”]", text)  # '"Zane: I went ..."': a quoted turn
        turn = TURN.match(inner[1] if inner else text)
        if turn and self.speaker(turn.group("who"), turn.group("text"), hint):
            self.turn(ex, hint, turn.group("who"), turn.group("text").strip())
            return
        quotes = list(QUOTE.finditer(text))
        said = _sentences_outside(text, quotes)
        if len(said) > 1:  # each sentence says its own thing: read them one by one
            for sentence in said:
                self.field(ex, phrases, hint, sentence)
            return
        if quotes:
            self.quoted(ex, phrases, hint, text, quotes)
            return
        pair = unquoted_replacement(text, lambda t: is_statement(t, self.is_name))
        gone = None if pair else unquoted_removal(text, lambda t: is_statement(t, self.is_name))
        if pair is not None or gone is not None:
            ex.replaced += [pair] if pair else []
            ex.removed += [gone] if gone else []
            ex.shows_output = True
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
        asides = [m.span() for m in re.finditer(r"\([^()]*\)", text)]  # "overwrote 'X' (and with it 'Y') with 'Z'"
        main = [i for i, (start, _, _) in enumerate(spans) if not any(a < start < b for a, b in asides)]
        for i, j in zip(main, main[1:], strict=False):
            if i in used:
                continue
            before, between = text[spans[i - 1][1] if i else 0:spans[i][0]], text[spans[i][1]:spans[j][0]]
            if re.search(r"[.!?]\s+[A-Z\"'“(]|\n", between):
                continue  # two sentences: neither says what the other did
            before = re.split(r"[.!?]\s+(?=[A-Z\"'“(])", before)[-1]
            first_old = replacement(f"{hint} {before}", between, text[spans[j][1]:])
            first, second = spans[i][2], spans[j][2]
            if first_old is not None and self.memory_pair(first, second):
                ex.replaced.append((first, second) if first_old else (second, first))
                ex.shows_output = True
                used |= {i, j}
        for i, (start, end, inner) in enumerate(spans):
            if i in used:
                continue
            before = text[spans[i - 1][1] if i else 0:start]
            after = text[end:spans[i + 1][0] if i + 1 < len(spans) else len(text)]
            after = re.split(r"[.!?][\"'”]?\s", after, maxsplit=1)[0]  # the words after it in its sentence
            self.piece(ex, phrases, f"{hint} {before[-60:]}", inner, after=after[:40], quoted=True)
        rest = QUOTE.sub(" ", text)
        for clause in _CLAUSES.split(rest):
            roles = [m.start() for m in (CUES["gold"].search(clause), CUES["answered"].search(clause)) if m]
            if QUESTION.search(clause) or roles:  # 'Asking "...?" returns Rocky': from the word that names it
                self.piece(ex, phrases, hint, clause if QUESTION.search(clause) else clause[min(roles):],
                           hinted_only=True)

    def memory_pair(self, old: str, new: str) -> bool:
        """Whether two quotes around a word of replacing are memories: both read as statements about someone, or one
        does and the other is a third-person sentence too ('... was overwritten by 'One special memory for Caroline
        was ...'')."""
        statements = [is_statement(t, self.is_name) for t in (old, new)]
        sentence = all(len(words(t)) >= 3 and not FIRST_PERSON.search(t) for t in (old, new))
        return all(statements) or (any(statements) and sentence)

    def piece(self, ex: Example, phrases: Phrases, hint: str, text: str, *, after: str = "", quoted: bool = False,
              hinted_only: bool = False) -> None:
        """One piece of text: a question, a turn, a statement, advice or a short answer phrase."""
        text = text.strip().strip(",;").strip()
        if not text:
            return
        asked = QUESTION.search(text)
        if asked and _REQUEST.match(asked.group(1)):
            return  # 'Could you take another look?': asks the reader, not the system
        if asked and (quoted or not FIRST_PERSON.search(text[:asked.start()])):
            question = asked.group(1).strip()
            inner = _INNER_QUESTION.search(question, 1)  # 'When asked Who wrote ...?' → 'Who wrote ...?'
            ex.question = ex.question or (question[inner.start():] if inner else question)
            rest = text[asked.end():]  # 'For the question ...? the system answered X'
            for clause in _CLAUSES.split(rest) if not quoted and words(rest) else ():
                self.piece(ex, phrases, hint, clause)
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
        who = self.speaker_near(hint, after) if (quoted or _TURN.search(hint)) and len(words(body)) >= 3 else None
        if who:  # 'Kira said "She's a dentist ..."': someone's words, first person or not
            ex.turns.append((who, body))
            return
        # 'Gold answer: Perseid meteor shower': what a label calls an answer is one, whatever words it starts with
        answer_label = not quoted and role_of(_tail_words(hint, 3)) is not None and not _HELD.search(hint)
        if is_statement(body, self.is_name) and not answer_label:
            around = f"{_tail_words(hint, 6)} {after}"
            side = label_side(_tail_words(hint, 3))
            if side is not None:  # "Memory before: X" ... "Memory after: Y": paired in `example`
                (ex.before if side == "old" else ex.after).append(body)
                ex.shows_output = True
            elif _REMOVED.search(after) or (_REMOVED.search(_tail_words(hint, 3))):
                ex.removed.append(body)
                ex.shows_output = True
            elif _READ.search(around) and not _HELD.search(_tail_words(hint, 3)):
                ex.context.append(body)
            else:
                ex.items.append(body)
                ex.shows_output = True
            return
        held = _HOLDING.match(body)  # 'the memory held X', 'it stored X': X is what the memory held
        if held and is_statement(held.group("rest"), self.is_name):
            self.piece(ex, phrases, f"{hint} {held.group('lead')}", held.group("rest"), after=after)
            return
        if is_advice(body, self.is_name):
            self.advice.append(body)
            return
        n, meta = len(words(body)), bool(set(words(body)) & WORDS["meta"])
        labelled = not quoted and role_of(hint) is not None  # 'Gold answer: ...', {"expected": ...}
        subject = bool(lead) and lead.split()[-1].lower() in WORDS["role_nouns"] and body[:1].islower()
        if subject and not labelled:  # 'The gold answer lists several items': a sentence about it, not an answer
            return
        code = re.search(r"\w\(|==|\w\[", body)  # 'memory.ask(question)': code, not an answer
        if 0 < n <= (16 if labelled or quoted else 8) and (labelled or not meta) and not code:
            phrases.append((body.rstrip("."), role))

    def speaker_near(self, before: str, after: str) -> str | None:
        """The name a quoted utterance is attributed to ('Zane said "..."', 'Zane: "..."', '"...", said Zane', 'source
        turn (Zane): ...')."""
        named = re.search(r"\(([A-Z][\w'-]*)\)\W*$", before) if CUES["turn"].search(before) else None
        found = [m.group(1) or m.group(m.lastindex or 1) for m in (_SAID_BEFORE.search(before[-60:]),
                                                                    _SAID_AFTER.match(after), named) if m]
        names = [n for n in found if self.is_name(n)]
        return names[0] if names else None


# --- helpers ------------------------------------------------------------------------------------


def _section_hints(lines: list[str]) -> list[str]:
    """Each line's section: the label of a header line ('Conversation:') over the lines below it that are indented
    deeper (or bulleted under an unbulleted header), or a short Markdown heading ('### Expected') over every line up
    to the next heading; a Markdown quote ('> Q: ...') is quoted (a conversation, or the question asked)."""
    hints, section, depth, bulleted, heading = [], "", 0, False, False
    for line in lines:
        indent = len(line) - len(line.lstrip())
        title = _HEADING.match(line)
        label = _LABEL.match(_BULLET.sub("", line).strip())
        inside = section and (heading or indent > depth or (indent == depth and not bulleted and
                                                            bool(_BULLET.match(line))))
        hint = section if inside and not title else ""
        if line.lstrip().startswith(">"):
            hint = f"{hint} blockquote".strip()
        hints.append(hint)
        if title:
            section, heading = title.group(1), True
        elif label and not label.group("rest").strip():
            section, depth, bulleted, heading = label.group("label"), indent, bool(_BULLET.match(line)), False
        elif not inside:
            section = ""
    return hints


def _sentences_outside(text: str, quotes: list[re.Match]) -> list[str]:
    """The sentences of a text, split only where no quote is open."""
    cuts = [m.end() for m in re.finditer(r"(?<=[.!?])[\"'”]?\s+(?=[A-Z\"“'(\[])", text)
            if not any(q.start() < m.start() < q.end() - 1 for q in quotes)]
    return [text[a:b].strip() for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True) if text[a:b].strip()]


def _asked(text: str) -> str | None:
    """The last question a text asks, lower case, for telling whether two lines ask the same one."""
    found = QUESTION.findall(text)
    return " ".join(words(found[-1])) if found else None


def _tail_words(text: str, n: int) -> str:
    return " ".join(text.split()[-n:])


def _speakers_key(key: str) -> bool:
    """Whether a label may name speakers: it names no answer and no other field ('expected', 'got', 'stage')."""
    return role_of(key) is None and key.lower() not in LABEL_WORDS


def _spoken(names: list[str], text: str) -> list[tuple[str, str]]:
    """Who said what: each of several speakers with its part of the text (split as the names are, else by
    sentence), or one speaker (or one person named several times) with all of it."""
    for parts in (re.split(r"\s+/\s+|\s*;\s+|\s+\|\s+", text), _sentences(text)):
        if len(names) > 1 and len(parts) == len(names):
            return list(zip(names, parts, strict=True))
    return [(names[0], text)] if len(set(names)) == 1 else [(" ".join(names), text)]


def _sentences(text: str) -> list[str]:
    """The sentences of a text (split after '.' / '!' and at line breaks)."""
    return [s.strip() for s in re.split(r"(?<=[.!])\s+|\n+", text) if s.strip()]


def error_or_op(label: str, text: str, *, labelled: bool = False) -> tuple[str | None, str | None]:
    """The error type or the blamed operation a field labelled so names (``labelled``: only by its label), or else
    that a sentence names ('ExtractionError', 'blamed on mem0.extract')."""
    label = " ".join(label.lower().split()[-3:])
    tail = label.split()[-2:] if label else []
    if label and (CUES["error"].fullmatch(label) or CUES["error"].fullmatch(" ".join(tail)) or
                  (tail and CUES["error"].fullmatch(tail[-1]))):
        return text.strip(), None
    if label and (CUES["operation"].fullmatch(label) or (tail and CUES["operation"].fullmatch(" ".join(tail)))):
        return None, text.strip()
    if labelled:
        return None, None
    error, op = ERROR_NAME.search(text), _OP_NAME.search(text)
    return (error.group(0) if error else None), (op.group(1) if op else None)


def read_feedback(text: str) -> Reading:
    """The examples (one per question) and the general advice of a feedback text, in any format."""
    text = as_lines(text)
    return _Reader(text).read(text)
