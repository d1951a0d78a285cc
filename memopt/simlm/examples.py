"""Read the examples in reflection feedback the way a person would, whatever their format and language.

`memopt.simlm.example_layouts` writes every layout as labelled lines (JSON, tables, key=value logs and diffs as
paragraphs of 'key: value' lines); `read_feedback` finds the examples in them, one per question asked, and sorts the
pieces of each by what they *are* and by the role words around them (`memopt.simlm.example_parts.CUES`, in several
languages), never by a particular tool's labels, error-type names or operation ids:

- the question: a sentence ending with '?' that is no line of dialogue and asks no one reading ('Could you ...?');
- source turns: 'Name: text', a field naming who spoke beside one with their words, words quoted after 'Zane
  said' / 'Xavi's message' / 'source turn (Zane)', or someone's first-person words. A name is a capitalised word the
  feedback never writes in lower case; a label word ('Q', 'Impact', 'Betreff') is a speaker only where the words
  around say so or the text is someone's words;
- statements about a named person: what an operation produced or stored, read at question time (near a word of
  reading), removed (near a word of removal), or the old and new memory of a replacement (a pair near a word of
  replacing, in any voice and order, or labelled before / after);
- short phrases: the gold answer and the system's, by the role words before them ('expected', 'got', 'Erwartet'),
  else by what they answer (`memopt.simlm.example_parts.assign_answers`);
- the error type and the blamed operation as written (diagnosis does not use them); advice: general instructions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memopt.core.text import find_relative_dates, words
from memopt.simlm.example_families import opening_shape, parallel
from memopt.simlm.example_layouts import BULLET, HEADING, LABEL, as_lines, key_words, section_hints
from memopt.simlm.example_parts import (
    CUES,
    ERROR_NAME,
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
from memopt.simlm.example_text import CLAUSES, REPORTED, SAID, SAID_AFTER, SAID_BEFORE, clauses
from memopt.simlm.example_text import asked as _asked
from memopt.simlm.example_text import introduced as _introduced
from memopt.simlm.example_text import named_field as _named_field
from memopt.simlm.example_text import passive_lead as _passive_lead
from memopt.simlm.example_text import sentences as _sentences
from memopt.simlm.example_text import sentences_outside as _sentences_outside
from memopt.simlm.example_text import tail as _tail
from memopt.simlm.example_text import told as _told
from memopt.simlm.example_text import without_op as _without_op

__all__ = ["Reading", "read_feedback"]

TURN = re.compile(r"^(?P<who>[A-Z][\w'-]*(?: [A-Z][\w'-]*)?)\s*(?:\([^)]{0,30}\))?(?P<sep>:|\s[-–—]+|\s?>|\s›)\s+"
                  r"(?P<text>\S.*)$")  # 'Priya> I ...': a prompt's arrow
_OP_NAME = re.compile(r"\b(?:blamed on|blame falls on|blame goes to|caused by|fault of|in|at)\s+(?:the\s+)?"
                      r"([a-z][\w-]*\.[a-z][\w.-]*)")
_INNER_QUESTION = re.compile(r"(?<=\s)(?:When|What|Where|Who|Whom|Whose|Which|Why|How|Did|Does|Do|Is|Are|Was|"
                             r"Were|Has|Have|Had|Can|Could|Will|Would)\b")
_REQUEST = re.compile(r"(?:could|can|would|will|do|should|shall|may|might)\s+(?:you|we|some(?:one|body)|"
                      r"any(?:one|body)|one of you)\b", re.I)  # asks the reader: 'Can someone look at these?'
_SEPARATORS = re.compile(r"\s+\|\s+|\s+/\s+|\s*\n\s*")
_HOLDING = re.compile(r"^(?P<lead>(?:\w+\W+){0,6}?(?:held|holds|contained|contains|had|has|stored|stores|kept|keeps|"
                      r"wrote|produced|produces|read|reads|retrieved|returned|saved|recorded)(?:\s+only)?)"
                      r"(?:\s+(?:was|were|is|are))?\s*:?\s+"
                      r"(?P<rest>.+)$", re.I)
_LABEL_HEAD = re.compile(r"(?:\s+[\w'.-]+){0,3}\s*(?:\([^)\n]{0,30}\))?\s*:")  # 'Impact:', 'Erwartet (expected):'
_DOTTED = re.compile(r"(?<=\s)[a-z]\w*\.[a-z][\w.]*")  # 'consulted by mem0.answer': the op's name, no role word
_ARROW_ANSWER = re.compile(r"[\"'”]?\s*(?:->|→|=>|⇒)\s*(?P<value>[^\s(;,][^(;\n]*?)\s*(?=[(;]|$)")
_SHORT_LIST = re.compile(r"[a-z][\w'-]*(?: [\w'-]+){0,3}(?:,(?: and)? [a-z][\w'-]*(?: [\w'-]+){0,3})+\)?")
_FROM = re.compile(r"\b(?:from|out of)\s+(?:the\s+)?\S+", re.I)  # 'fetches from memory': where it read
_NAMED_VALUE = re.compile(r"(?i).*\b(?:is|be|was|are|were|says|said|answers|answered|replies|replied|gives|gave|"
                          r"returns|returned)\s+(?!\w+ed\b)[a-z][\w'-]*(?:\s[a-z][\w'-]*){0,2}$")
_APPOSITIVE = re.compile(r",[^,;:\n]{1,40},")
_JOINER = re.compile(r"\s*(?:[+&,;|/]|\band\b|\bor\b|\bplus\b|,\s*and\b)?\s*", re.I)
_SENTENCE_END = re.compile(r"[.!?]\s+(?=[A-Z\"'“(])")
_SINGULAR = re.compile(r"\b(?:I|I'm|I've|I'd|I'll)\b|\b(?i:me|my|mine|myself)\b")  # a person's words, not a team's
_READ, _HELD, _TURN, _REMOVED = CUES["read"], CUES["held"], CUES["turn"], CUES["removal"]


Phrases = list[tuple[str, str | None]]  # short answer phrases with their role ("gold", "answer" or None)


_ROLES = ("asked", "gold", "answered", "turn", "held", "read", "old", "new")


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
        self.addressed = bool(re.search(r"(?i)\byour (?:answer|response|reply)\b", text))  # the system as 'you'

    def is_name(self, token: str) -> bool:
        """A capitalised word that is no role word and that the feedback never writes in lower case."""
        token = token.removesuffix("'s")  # a word in capitals is a heading ('ESCALATION'), no name
        return bool(token[:1].isupper()) and token.lower() not in NOT_NAMES and token.lower() not in self.lower and \
            not (token.isupper() and len(token) > 3)

    def is_label(self, label: str, rest: str, hint: str) -> bool:
        """Whether 'label: rest' is a labelled field (not a turn of someone named like the label, nor an id: 'D6:1',
        nor someone's words reported: 'Someone asked: ...')."""
        first = label.split()[0]
        if not self.is_name(first):
            return True
        return not REPORTED.match(label) and not (self.speaker(first, rest, hint) or re.search(r"\d", label))

    def speaker(self, who: str, text: str, hint: str = "") -> bool:
        """Whether 'who: text' is a turn: a name used as one elsewhere in the feedback, or any name when the words
        around say it is a turn or its own words (not those it quotes) are someone's; a word that labels questions
        or answers ('Q', 'A', 'Asked') only in those two cases, and not for a question."""
        if not self.is_name(who):
            return False
        own = text if QUOTE.fullmatch(text.strip()) else QUOTE.sub(" ", text)  # not the words it quotes
        if who.lower() in LABEL_WORDS:
            return bool(_TURN.search(hint)) or (bool(_SINGULAR.search(own)) and not QUESTION.search(text))
        return all(w in self.named for w in who.split()) or bool(_TURN.search(hint) or "blockquote" in hint or
                                                                  _SINGULAR.search(own))  # 'Cause: We report ...'

    # --- examples -----------------------------------------------------------------------------------------------

    def read(self, text: str) -> Reading:
        """A paragraph asking questions holds one example per question (not the same question again: a ticket's
        title and its steps ask it twice); one asking none goes on with the example before it, or gives advice."""
        segments: list[list[tuple[str, str]]] = []
        pending: list[tuple[str, str]] = []  # paragraphs introducing what follows ('Given this turn:' + the turn)
        leading = False  # whether such an introduction came before the first question: then they lead the next one
        preamble: list[str] = []  # paragraphs before the first example that are none of its parts: kept in its text
        paragraphs = _introduced(re.split(r"\n\s*\n", text))
        shapes, head, opening = [opening_shape(p) for p in paragraphs], None, False  # an example's first paragraph
        for paragraph, shape in zip(paragraphs, shapes, strict=True):
            raw = [line for line in paragraph.splitlines() if line.strip()]  # a line telling several examples: its
            told = [(_without_op(h), s) for h, line in zip(section_hints(raw), raw, strict=True)  # its sentences
                    for s in _told(line)]
            hints, lines, starts = [h for h, _ in told], [s for _, s in told], []
            last = _asked(" ".join(text for _, text in segments[-1])) if segments else None
            for i, line in enumerate(lines):
                if self.asks(line, hints[i]):
                    starts += [i] if _asked(line) is None or _asked(line) != last else []
                    last = _asked(line)
            if starts:
                cuts = [0, *starts[1:], len(lines)]
                segments += [list(zip(hints[a:b], lines[a:b], strict=True)) for a, b in zip(cuts, cuts[1:],
                                                                                            strict=False)]
                segments[-len(cuts) + 1][:0], pending, opening = pending, [], False
                continue
            if head is None and shape and not segments and shapes.count(shape) > 1:
                head = shape  # the first example opens before its question, and the others open alike
            opening = opening or shape == head
            said = _sentences(paragraph)
            advice = [s for s in said if is_advice(s, self.is_name)]
            if opening:
                pending += list(zip(hints, lines, strict=True))
            elif lines and lines[0].rstrip().endswith(":") and len(lines) > 1 and (leading or not segments):
                leading, pending = True, pending + list(zip(hints, lines, strict=True))
            elif segments and len(advice) < len(said):  # an example told over several paragraphs goes on
                segments[-1] += pending + list(zip(hints, lines, strict=True))
                pending = []
            else:
                self.advice += advice
                preamble += [] if segments else [paragraph]  # a title before the first example ('BUG — update error')
        if segments:
            segments[-1] += pending
        examples = [self.example(fields) for fields in segments]
        for example, fields in zip(examples, segments, strict=True):
            example.text = "\n".join(line for _, line in fields)
        if examples:
            examples[0].text = "\n".join([*preamble, examples[0].text])
        return Reading([e for e in examples if e.question], list(dict.fromkeys(self.advice)))

    def asks(self, line: str, hint: str = "") -> bool:
        """Whether a line asks a question (and is not a line of dialogue)."""
        body = BULLET.sub("", line).strip()
        for _ in range(2):
            turn = TURN.match(body)
            if turn and self.speaker(turn.group("who"), turn.group("text"), hint):
                return False
            label = LABEL.match(body)
            body = label.group("rest").strip() if label else body
        asked = QUESTION.search(body)  # not '... Could you take another look?'
        return bool(asked) and not _REQUEST.match(re.split(r"(?<=[.!)])\s+", asked.group(1))[-1]) and \
            not self.about_case(asked.group(1))

    def about_case(self, question: str) -> bool:
        """A question the people discussing an example ask about it ('where's it from?', 'what did mem0.answer look
        at?'): it names no one, and points at the case ('it', 'this') or names an operation; no example's question."""
        named = [t for t in re.findall(r"\b[A-Z][\w'-]*", question)[1:] if self.is_name(t)]
        return not named and bool(re.search(r"\b(?:it|this|that|these|those)\b|^why\b", question, re.I) or
                                  _DOTTED.search(f" {question}"))  # 'Why was the reply wrong?': the five whys

    def example(self, fields: list[tuple[str, str]]) -> Example:
        """One example from its (hint, text) fields; old and new memories labelled so paired in order; then which
        short phrase is the gold answer."""
        ex, phrases = Example(), []
        for hint, text in self.paired(fields):
            self.field(ex, phrases, hint, text)
        n = min(len(ex.before), len(ex.after))
        ex.replaced += list(zip(ex.before[:n], ex.after[:n], strict=True))
        ex.items += ex.before[n:] + ex.after[n:]
        assign_answers(ex, phrases)
        return ex

    def paired(self, fields: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """A field holding someone's words ('text: I adopted ...', 'utterance: ...') beside one naming who spoke
        ('speaker: Xavi', 'said_by: Xavi, Xavi') is their turn, one per name when it names several (the words split
        as the names are, else by sentence)."""
        out, used = list(fields), set()
        label = [LABEL.match(BULLET.sub("", text).strip()) for _, text in fields]
        names = [self.names(m["rest"]) if m and role_of(m["label"]) is None and m["label"].lower() not in LABEL_WORDS
                 else [] for m in label]
        bare = [bool(m and not m["rest"].strip()) for m in label]  # a heading ('data:') between is no field
        for j, m in enumerate(label):
            own = bool(m and FIRST_PERSON.search(m["rest"]))  # someone's own words reach across a heading
            near = (j - 1, j + 1, *((j - 2,) if own and j > 1 and bare[j - 1] else ()),
                    *((j + 2,) if own and j + 2 < len(out) and bare[j + 1] else ()))
            i = next((i for i in near if 0 <= i < len(out) and names[i] and i not in used), None)
            if m and not names[j] and i is not None and role_of(m["label"]) is None and len(words(m["rest"])) >= 3 \
                    and not (m["label"].split()[0] in self.named and self.is_name(m["label"].split()[0])) \
                    and not TURN.match(m["rest"]) and (FIRST_PERSON.search(m["rest"]) or (
                        _TURN.search(f"{fields[j][0]} {m['label']} {label[i]['label']}") and
                        not QUESTION.search(m["rest"]))):
                parts = next((p for p in (re.split(r"\s+/\s+|\s*;\s+|\s+\|\s+", m["rest"]), _sentences(m["rest"]))
                              if len(names[i]) > 1 and len(p) == len(names[i])), None)
                turns = zip(names[i], parts, strict=True) if parts else [(" ".join(dict.fromkeys(names[i])), m["rest"])]
                out[j], out[i] = (f"{fields[j][0]} {m['label']} said", "\n".join(f"{n}: {t}" for n, t in turns)), \
                    (fields[i][0], "")
                used.add(i)
        return out

    def names(self, value: str) -> list[str]:
        """The names a value lists ('Xavi', 'Xavi / Gina', 'Xavi, Xavi'), each of at most two words; else none."""
        found = [n.strip(" \"'“”") for n in re.split(r"\s*(?:[/,;&]|\band\b)\s*", value) if n.strip(" \"'“”")]
        ok = found and not ERROR_NAME.search(value) and all(
            len(n.split()) <= 2 and all(self.is_name(t) for t in n.split()) for n in found)
        return found if ok else []

    # --- fields -------------------------------------------------------------------------------------------------

    def field(self, ex: Example, phrases: Phrases, hint: str, text: str) -> None:
        """A line or part of one: its label (and a role word labelling its value: 'Stage I/O: out: ...') joins the
        hint; then its parts, a turn, its sentences, its quotes, a replacement or removal, or its clauses."""
        text = BULLET.sub("", text).strip()
        if not text or HEADING.match(text):
            return  # a heading ('### Summary') is the hint of the lines under it, not a part
        labelled = re.split(r"\s+\|\s+", text)  # 'Expected: "X"  |  Got: "Y"': a field each
        if len(labelled) > 1 and all(LABEL.match(p) and LABEL.match(p)["rest"].strip() for p in labelled):
            for part in labelled:
                self.field(ex, phrases, hint, part)
            return
        kind = _named_field(hint) if hint.strip() else None  # 'Type: ExtractionError: ...' stays whole
        for depth in range(2):
            label = None if kind else LABEL.match(text)
            if not (label and not QUOTE.search(label["label"]) and '"' not in label["label"] and  # 'Say 'X': ...'
                    len(label["label"].split()) <= 5 and self.is_label(label["label"], label["rest"], hint)) or \
                    depth and not any(CUES[r].fullmatch(key_words(label["label"])) for r in _ROLES):
                break
            if not label["rest"].strip():
                return
            op_title = re.fullmatch(r"[a-z]\w*\.[a-z][\w.]*\s*[-–—]+\s.*", text)  # 'mem0.answer — why': a title
            ex.operation = ex.operation or (label["label"] if op_title else None)
            hint = hint if op_title else f"{hint} {key_words(_without_op(label['label']))}"
            text = label["rest"].strip()
            ex.shows_output |= bool(_HELD.search(hint) and not _READ.search(hint))
            kind = _named_field(hint)
        if kind:
            setattr(ex, kind, getattr(ex, kind) or text)
            if kind == "operation" or ERROR_NAME.match(text) or len(text.split()) <= 6:
                return  # else a sentence telling what went wrong ('Root cause: the update overwrote ...') is read on
        literal = re.fullmatch(r"\"(.*)\"", text)  # note: "The memory 'X' was overwritten by 'Y'": a string, not words
        text = literal[1] if literal and re.search(r"(?<!\w)'[^']+'(?!\w)|“[^”]+”", literal[1]) else text
        error, operation = ERROR_NAME.search(text), _OP_NAME.search(text)  # 'blamed on mem0.extract (ExtractionError)'
        ex.error = (error and not ERROR_NAME.search(ex.error or "") and error[0]) or ex.error  # a class beats 'Bug'
        ex.operation = ex.operation or (operation and operation[1])
        parts = parallel([p for p in _SEPARATORS.split(text) if p.strip()])
        quoted_turn = re.fullmatch(r"[\"“](.+)[\"”]", text)  # '"Zane: I went ..."'
        turn = TURN.match(quoted_turn[1] if quoted_turn else text)
        quotes = list(QUOTE.finditer(text))
        said = _sentences_outside(text, quotes)
        if len(parts) > 1 or (len(said) > 1 and not (turn and self.speaker(turn["who"], turn["text"], hint))):
            for part in parts if len(parts) > 1 else said:  # each part, each sentence says its own thing
                self.field(ex, phrases, hint, part)
        elif turn and self.speaker(turn["who"], turn["text"], hint):  # under words of reading or storing: an item
            speaker, words_ = turn["who"], turn["text"].strip()
            quoted = len(words_) > 1 and words_[0] + words_[-1] in ('""', "“”")
            words_ = words_[1:-1].strip() if quoted else words_
            if (_READ.search(hint) or _HELD.search(hint)) and not quoted and turn["sep"].strip() not in ">›":
                # a quote of what Zane said, a chat line ('Zane> I ...') is a turn:
                # 'Extrait de la conversation : Zane : « I went ... »'
                (ex.context if _READ.search(hint) else ex.items).append(f"{speaker}: {words_}")
            else:
                ex.turns.append((speaker, words_))
        elif quotes:
            self.quoted(ex, phrases, hint, text, quotes)
        elif pair := unquoted_replacement(text, lambda t: is_statement(t, self.is_name)):
            ex.replaced, ex.shows_output = [*ex.replaced, pair], True
        elif gone := unquoted_removal(text, lambda t: is_statement(t, self.is_name)):
            ex.removed, ex.shows_output = [*ex.removed, gone], True
        else:
            for clause in clauses(text):
                self.piece(ex, phrases, hint, clause)

    def quoted(self, ex: Example, phrases: Phrases, hint: str, text: str, quotes: list[re.Match]) -> None:
        """A text with quotes: pairs of memories one replaced (quotes in a parenthetical aside left out: "overwrote
        'X' (and with it 'Y') with 'Z'"), then each quote with the words around it, then the question and the
        answers the words outside the quotes name ('Asking "...?" returns Rocky')."""
        spans = [(q.start(), q.end(), next(g for g in q.groups() if g is not None).strip()) for q in quotes]
        asides = [m.span() for m in re.finditer(r"\([^()]*\)", text)]
        main, used = [i for i, (start, _, _) in enumerate(spans) if not any(a < start < b for a, b in asides)], set()
        for i, j in zip(main, main[1:], strict=False):
            before, between = text[spans[i - 1][1] if i else 0:spans[i][0]], text[spans[i][1]:spans[j][0]]
            if i in used or re.search(r"[.!?]\s+[A-Z\"'“(]|\n", between):
                continue  # two sentences: neither says what the other did
            first_old = replacement(f"{hint} {_SENTENCE_END.split(before)[-1]}", between, text[spans[j][1]:])
            pair = [spans[i][2], spans[j][2]]
            statements = [is_statement(t, self.is_name) for t in pair]  # one may be a loose third-person sentence
            sentences = all(len(words(t)) >= 3 and not FIRST_PERSON.search(t) and not t.endswith("?") for t in pair)
            if first_old is not None and not pair[0].endswith("?") and (all(statements) or any(statements) and
                                                                        sentences):
                ex.replaced.append((pair[0], pair[1]) if first_old else (pair[1], pair[0]))
                ex.shows_output, used = True, used | {i, j}
        around = hint
        for i, (start, end, inner) in enumerate(spans):
            if i not in used:
                before = re.split(r";\s", text[spans[i - 1][1] if i else 0:start])[-1]  # its own clause
                after = re.split(r"[.!?][\"'”]?\s", text[end:spans[i + 1][0] if i + 1 < len(spans) else len(text)],
                                 maxsplit=1)[0]  # the words after it in its sentence
                if not (i and _JOINER.fullmatch(before)):  # '“A” + “B”', '“A”, “B” and “C”': one list, one role
                    around = f"{hint} {before[-60:]}"
                named = self.names(spans[i - 1][2]) if i and re.fullmatch(r"[^\w\n]*(?:\w+:)?[^\w\n]*", before) and \
                    not self.names(inner) else []  # a name, then (a label and) words: '"Zane", says: "I ..."'
                self.piece(ex, phrases, around, inner, after=after[:40], quoted=True,  # 'said(c, "Zane", "I ...")'
                           speaker=named[0] if len(named) == 1 else None)
        for (_, end, inner), nxt in zip(spans, [*spans[1:], (len(text), 0, "")], strict=True):
            got = _ARROW_ANSWER.match(text, end, nxt[0]) if inner.endswith("?") else None
            if got and not (CUES["gold"].search(got["value"]) or CUES["answered"].search(got["value"])):
                # '"Where ...?" -> Hartwell (want Arts Hub)': what it got ('→ bot says X' is read by its words)
                phrases.append((got["value"].strip(" \"'“”"), "answer"))
        for aside in re.findall(r"\(([^()\n]{1,80})\)", QUOTE.sub(" ", text)):
            lead, body = lead_words(aside)  # '(want vet)', '(expected: Arts Hub)': a value its role words lead
            if lead and body and role_of(lead):
                phrases.append((body.strip(" :"), role_of(lead)))
        for clause in CLAUSES.split(QUOTE.sub(" ", text)):
            roles = [m.start() for m in (CUES["gold"].search(clause), CUES["answered"].search(clause)) if m]
            if QUESTION.search(clause) or roles:
                self.piece(ex, phrases, hint, clause if QUESTION.search(clause) else clause[min(roles):],
                           hinted_only=True)

    def piece(self, ex: Example, phrases: Phrases, hint: str, text: str, *, after: str = "", quoted: bool = False,
              hinted_only: bool = False, speaker: str | None = None) -> None:
        """One piece of text: a question, a turn, a statement, advice or a short answer phrase."""
        text = text.strip().strip(",;").strip()
        asked = QUESTION.search(text)
        if not text or asked and _REQUEST.match(asked.group(1)):
            return  # 'Could you take another look?': asks the reader, not the system
        if asked and (quoted or not FIRST_PERSON.search(text[:asked.start()])):
            question = asked.group(1).strip()
            inner = _INNER_QUESTION.search(question, 1)  # 'When asked Who wrote ...?' → 'Who wrote ...?'
            ex.question = ex.question or (question[inner.start():] if inner else question)
            rest = text[asked.end():]  # 'For the question ...? the system answered X'
            for clause in clauses(rest) if not quoted and words(rest) else ():
                self.piece(ex, phrases, hint, clause)
            return
        lead, body = lead_words(text)
        role = (lead and role_of(lead)) or role_of(f"{hint} {lead}") if not quoted else \
            role_of(_tail(_APPOSITIVE.sub(" ", hint), 5))  # 'The correct response, per the record, is “X”'
        if quoted and _passive_lead(after):  # '“Rocky” is returned by the system', '“Milo” was expected'
            role = role_of(re.split(r"[;,:]", after)[0]) or role
        if quoted and re.match(r"\s*==", after):  # "assert 'Rocky' == 'Milo'": the value tested, then the one expected
            role = "answer"
        if role == "answer" and self.addressed and re.search(r"(?i)\bmodel\b", f"{_tail(hint, 3)} {lead}"):
            role = "gold"  # told 'your answer', the system is 'you': a 'model answer' is the one to copy
        if hinted_only and (role is None or not re.search(r"\d|[A-Z]", body) and not find_relative_dates(body) and
                            not _SHORT_LIST.fullmatch(body.rstrip(".")) and
                            not _NAMED_VALUE.match(f"{lead} {body.rstrip('.')}")):
            # kept: 'should be pottery, rock climbing, baking' (a list), 'should be vet' (a value a copula names)
            return
        said = SAID.match(body)
        who = said["who"] if said and self.is_name(said["who"]) else None
        if not who and (FIRST_PERSON.search(body) or quoted or _TURN.search(hint)) and len(words(body)) >= 3 and \
                (quoted or not ERROR_NAME.search(body) and not _DOTTED.search(body)):  # 'I filed it against mem0.x'

            who = self.speaker_near(hint, after) or speaker or ("" if FIRST_PERSON.search(body) else None)
        if who == "" and not quoted and not _TURN.search(hint) and \
                set(words(body)) & (WORDS["meta"] | WORDS["pipeline"]):
            who = None  # 'As far as I can tell, the message had the answer ...': the writer's words about the case
        if who is not None:  # 'Kira said "She's a dentist ..."', someone's first-person words
            ex.turns.append((who or None, said["text"].strip(" \"'“”") if said and who == said["who"] else body))
            return
        # 'Gold answer: Perseid meteor shower', 'it said "Gina's sister Mia"': what the words before call an answer is
        # one, whatever words it starts with (unless they are words of storing or reading)
        around = _tail(hint, 3) if quoted else hint
        named = role_of(_tail(hint, 3)) is not None and not (_HELD.search(around) or _READ.search(around))
        gone = _REMOVED.search(" ".join(re.sub(r"^\W*(?:(?:was|were|got|been|is|has)\s+)*", "", after).split()[:2]))
        if is_statement(body, self.is_name) and (not named or gone):
            side = label_side(_tail(hint, 3))
            if gone:  # 'X was purged', 'Observed X removed from the store' (whatever the label calls it)
                ex.removed.append(body)
            elif side is not None:  # "Memory before: X" ... "Memory after: Y": paired in `example`
                (ex.before if side == "old" else ex.after).append(body)
            elif _REMOVED.search(after) or _REMOVED.search(_tail(hint, 3)):
                ex.removed.append(body)
            elif _READ.search(f"{_tail(hint, 6)} {after}") and not _HELD.search(_FROM.sub("", _tail(hint, 3))):
                ex.context.append(body)
                return
            else:
                ex.items.append(body)
            ex.shows_output = True
            return
        held = _HOLDING.match(body)  # 'the memory held X', 'it stored X': X is what the memory held
        told = re.split(r",?\s+and\s+(?=[A-Z\[])|;\s+", held.group("rest")) if held else []
        statements = [t for t in told if is_statement(t, self.is_name)]
        if held and statements:  # 'what got stored was A, and B' (an item about no one among them is left out, as
            for statement in statements:  # in a list of items)
                self.piece(ex, phrases, f"{hint} {held.group('lead')}", statement, after=after)
        elif is_advice(body, self.is_name):
            self.advice.append(body)
        else:
            labelled = not quoted and role_of(hint) is not None  # 'Gold answer: ...', {"expected": ...}
            if labelled and not role_of(lead) and _READ.search(_tail(hint, 6)) and not role_of(_tail(hint, 2)):
                return  # a piece of what was read ('at answer time it reads: ...; Diego's boss'): no answer
            if lead and lead.split()[-1].lower() in WORDS["role_nouns"] and body[:1].islower() and not labelled:
                return  # 'The gold answer lists several items': a sentence about it, not an answer
            n, meta = len(words(body)), bool(set(words(body)) & WORDS["meta"])
            led = bool(lead) and role_of(lead) is not None and lead.split()[-1].lower() not in WORDS["role_nouns"]
            if 0 < n <= (16 if labelled or quoted or led else 8) and (labelled or not meta) and \
                    not re.search(r"\w\(|==|\w\[", body):  # 'memory.ask(question)': code, not an answer
                phrase = re.split(r"\s+and\s+(?=[a-z]+(?:ed|t)\s+(?:out|off|away)\b)", body.rstrip("."))[0]
                phrase = phrase.removeprefix("only ")  # 'gave only X and left out Y': X, up to the next verb's clause
                phrase = phrase.rstrip(")").rstrip() if phrase.count(")") > phrase.count("(") else phrase  # '(want X)'
                if not ERROR_NAME.search(phrase) and not _DOTTED.search(f" {phrase}") and \
                        not (role is None and phrase.isupper() and len(re.sub(r"\W|\d", "", phrase)) > 3) and \
                        not re.fullmatch(r"[\[(#]?\d{1,3}[\])]?", phrase):  # '[1]', '[mem0.extract] ...': no answer
                    phrases.append((phrase, role))

    def speaker_near(self, before: str, after: str) -> str | None:
        """The name a quoted utterance is attributed to ('Zane said "..."', 'Zane: "..."', '"...", said Zane', 'source
        turn (Zane): ...', 'turn · Zane: ...': a name ending a label of turns)."""
        named = re.search(r"\b([A-Z][\w'-]*)\)?\W*$", before) if _TURN.search(before) else None
        source = re.search(r"\b(?:from|by)\s+([A-Z][\w'-]*)[^“\"]*$", before[-60:])  # 'the line is from Zane: “...'
        found = [m.group(1) or m.group(m.lastindex or 1) for m in (SAID_BEFORE.search(before[-60:]),
                                                                    SAID_AFTER.match(after), named, source) if m]
        return next((n for n in found if self.is_name(n)), None)


def read_feedback(text: str) -> Reading:
    """The examples (one per question) and the general advice of a feedback text, in any format."""
    lines = as_lines(text)
    reading = _Reader(lines).read(lines)
    # markup the normalising took for a layout's (a tag line, a bracket) can hide every question: read it as written
    return reading if reading.examples or not text.strip() else _Reader(text).read(text)
