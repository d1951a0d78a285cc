"""What a failed answer needs: the pieces of information a context must hold for the answer to be right.

The gold decides. A gold that lists things ("Biscuit and Mochi", "Arabic, English and French") needs each item
(a *piece*); any other gold is one piece. A piece is held by a text the judge finds it in (`memopt.attribution.
probe.Probe`), unless every line with the piece's words is about someone else (`about_someone_else`: its subject
is a name neither the question nor the gold holds, and it names no one the question names: "Sam recommends the
pierogi in Krakow" does not hold "Krakow" for "Which cities did Chloe travel to?"). The question's names are never
part of what the judge looks for, so they cannot outvote a one-word gold.

A **computed** answer (a count, a sum, an ordinal, "N weeks ago": a gold made of numbers and units that no
evidence turn states, `is_quantity` and `states_quantity`) is held nowhere as such; it needs the facts it is
computed from. Each evidence turn that shares a word with the question is a piece (`computed_pieces`): a line
holds it when it has most of the words the turn shares with the question (half or more) and is that turn's fact
rather than another's (it shares more of the turn's own words than of any other evidence turn's, and at least a
third of them, or states every number the turn states: "has 12 students" is the fact of a long turn ending "12
students signed up already"); for a question about time (ago, since, how long, after, before, when) the line must
also state the turn's day (the date the turn gives, else the day it was said, a day either way); a line that is
only the date the turn gives (a field's value whose name was lost: "2025-03-27") holds it. Matching a line to
a turn is lexical (word stems), whichever judge runs.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from memopt.attribution.cast import Cast
from memopt.attribution.normalise import canonical_dates, normalise_numbers
from memopt.core.text import DATE_PATTERN, find_dates, overlap, python_literal, stem, stem_set, words

__all__ = ["Piece", "gold_pieces", "is_quantity", "asks_time", "names_in", "computed_pieces", "computed_held",
           "about_someone_else", "without_dates", "topic_stems", "states_quantity", "states_duration", "turned_round"]

_ORDINALS = ("first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
             "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth").split()
_NUMBERS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
            "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand "
            "half dozen").split()
_UNITS = ("times time attempts attempt weeks week days day months month years year hours hour minutes minute "
          "seconds second pounds pound dollars dollar euros euro gbp usd eur km kilometres kilometers miles mile "
          "metres meters kg kilos litres liters items people ago total overall").split()
_QUALIFIERS = "the a an about around roughly approximately over under more less than at least most nearly almost " \
              "just only exactly some".split()
_QUANTITY_WORD = re.compile(r"^(?:[£$€]?\d+(?:[.,:]\d+)*(?:st|nd|rd|th|%|k)?|" + "|".join(
    _ORDINALS + _NUMBERS + _UNITS + _QUALIFIERS) + r")$", re.IGNORECASE)
_TIME_QUESTION = re.compile(r"\b(?:ago|since|how long|how many (?:days|weeks|months|years|hours)|after|before|"
                            r"when|what date|which day)\b", re.IGNORECASE)
_NAME = re.compile(r"\b[A-Z][a-z]+(?:'s)?\b")
_NOT_NAMES = frozenset("what when where who whom which why how does did is are was were has have do can would will "
                       "i the a an on in at of for by to and or but my your his her their our it this that".split())
_LEAD = re.compile(r"^[\s\-*•\d:./()\[\],]*(?:[^\]]{0,60}\]\s*)?(?:\d{4}-\d{2}-\d{2}:?\s*)?")
_GENERIC = frozenset("user assistant he she they we you it its there here this that these those someone "
                     "everyone people".split())
_CALENDAR = frozenset(w.lower() for w in "January February March April May June July August September October "
                      "November December Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split())


_SCAFFOLD = frozenset(stem(w) for w in _UNITS + _NUMBERS + _ORDINALS + "how many much long ago total overall "
                      "altogether count number".split())


@dataclass(frozen=True)
class Piece:
    """One thing a right answer needs: a gold item, or (computed answers) one evidence turn's fact."""

    text: str
    turns: tuple[str, ...] = ()
    computed: bool = False
    day: dt.date | None = None
    stated: bool = False  # the day is one the turn states, not the day it was said
    polar: bool = False  # what a yes/no question asks about (`memopt.attribution.polar`): held only while not gone


def names_in(question: str) -> list[str]:
    """The people and things a question names (capitalised words after its first, without question words)."""
    found = [w.removesuffix("'s") for w in _NAME.findall(question)[1:] if w.lower() not in _NOT_NAMES]
    return list(dict.fromkeys(found))


def about_someone_else(line: str, question: str, gold: str, cast: Cast | None = None) -> bool:
    """Whether a line's subject (its first word, past bullets and date stamps) is a name neither the question nor
    the gold holds, and the line names no one the question names: "Sam recommends the pierogi in Krakow" is
    about Sam, not Chloe. With the conversation's `Cast`: only when the question names a speaker (a question
    about a band, a place or someone it describes has no one else); a first word that is no one of the
    conversation ("Training plan: ...", "Got Diego a car") gives way to the first person the line names, if any,
    unless the line states every word of what the question asks ("Dentist is Dr. Patil; dental cleaning on ...");
    and never about a name a turn writes together with one the question names (the teacher Tom met in Denver is
    Lena when a turn names Lena and Denver)."""
    known = {w.lower() for w in re.findall(r"[A-Za-z]+", f"{question} {gold}")}
    head = _LEAD.sub("", line)
    first = re.match(r"([A-Z][a-z]+)(?:'s)?\b", head)
    if first is None:
        return False
    subject = first.group(1).lower()
    if _about_the_owner(head, subject, question):
        return True
    asked = names_in(question)
    if cast is not None:
        if not cast.speaks(asked):
            return False
        if not cast.is_someone(subject):
            people = [w.lower() for w in re.findall(r"\b[A-Z][a-z]+", head)[1:] if cast.is_someone(w)]
            if not people or _states_topic(head, question):
                return False
            subject = people[0]
        if subject in cast.tied(asked):
            return False
    if subject in known or subject in _CALENDAR or subject in _NOT_NAMES or subject in _GENERIC:
        return False
    named = {n.lower() for n in asked}
    return not any(re.search(rf"\b{re.escape(n)}\b", line, re.IGNORECASE) for n in named)


_KIN = re.compile(r"\b([A-Z][a-z]+)'s\s+(sister|brother|mom|mother|mum|dad|father|son|daughter|wife|husband|partner|"
                  r"girlfriend|boyfriend|fianc[eé]e?|friend|boss|manager|colleague|coworker|neighbou?r|cousin|aunt|"
                  r"uncle|grandma|grandmother|grandpa|grandfather|niece|nephew|roommate|coach|kids?|child|children)"
                  r"\b", re.IGNORECASE)


def _about_the_owner(head: str, subject: str, question: str) -> bool:
    """Whether a line is about the person a question names only as the owner of whom it asks ("Grace started
    working as a paramedic" for "What is Grace's sister's job?"): its subject is that person and it names neither
    the relative nor anyone else."""
    kin = _KIN.search(question)
    if kin is None or kin.group(1).lower() != subject:
        return False
    others = [w for w in re.findall(r"\b[A-Z][a-z]+", head)[1:] if w.lower() not in _CALENDAR | _NOT_NAMES]
    return not others and stem(kin.group(2).lower()) not in stem_set(head)


def _states_topic(line: str, question: str) -> bool:
    """Whether a line states every word of what the question asks besides its names, two words at least ("Dentist
    is Dr. Patil; dental cleaning on Thursday" for "What day is Sofia's dental cleaning?"): a line about the thing
    asked, whoever else it names."""
    asked = topic_stems(question) - stem_set(" ".join(names_in(question)))
    return len(asked) >= 2 and asked <= stem_set(line)


def is_quantity(gold: str) -> bool:
    """Whether a gold is made only of numbers, ordinals, units and qualifiers ("3", "Four", "the fourth",
    "7 weeks", "269 pounds", "more than 4 minutes")."""
    tokens = [t for t in re.findall(r"[£$€]?[\w.,:%]+", gold) if t.strip(".,")]
    return bool(tokens) and all(_QUANTITY_WORD.match(t.strip(".,")) for t in tokens) and any(
        any(c.isdigit() for c in t) or t.lower().strip(".,") in _NUMBERS + _ORDINALS for t in tokens)


def topic_stems(question: str) -> frozenset[str]:
    """What a question asks about: its content stems without the scaffolding of a count or a duration ("how
    many", "weeks", "ago")."""
    return stem_set(normalise_numbers(question)) - _SCAFFOLD


def states_quantity(gold: str, text: str, question: str) -> bool:
    """Whether a text states a quantity gold: its words (dates left out), and, for a bare number ("3", "two"),
    that number beside a word of the question ("two half marathons", not "2 hours")."""
    gold, text = normalise_numbers(gold).strip(" ."), normalise_numbers(without_dates(text))
    if overlap(gold, text) < 1.0:
        return False
    if not re.fullmatch(r"(?:the\s+)?\d+", gold, re.IGNORECASE):
        return True
    asked = topic_stems(question)
    tokens = [stem(w) for w in words(text)]
    numbers = stem_set(gold)
    return any(t in numbers and asked & set(tokens[i + 1:i + 4]) for i, t in enumerate(tokens))


def without_dates(text: str) -> str:
    """A text with its dates left out (a quantity gold "3" is not stated by "on 3 June")."""
    return DATE_PATTERN.sub(" ", text)


def asks_time(question: str) -> bool:
    """Whether a question asks about time (how long ago, since, after, before, when)."""
    return bool(_TIME_QUESTION.search(question))


_STRONG = re.compile(r"\s*(?:;|\n|\|)\s*")
_BULLET = re.compile(r"(?:^|\n|\s)(?:[-*•]|\(?\d{1,2}[.)])\s+(?=\S)")
_WEAK = re.compile(r",|\band\b|\s&\s|\s/\s|\s\+\s")
_MASK = "\x00{}\x00"
_CLOCK_WORDS = frozenset({"am", "pm", "noon", "midnight", "between", "from", "to", "until", "till", "through"})


def _list_literal(gold: str) -> list[str] | None:
    """The items of a gold written as a list (``["Porto", "Krakow"]``), or None."""
    text = gold.strip()
    if not (text.startswith("[") and text.endswith("]")):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        try:
            value = python_literal(text)  # one thread at a time (memopt.core.text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
    if not isinstance(value, list) or not all(isinstance(v, (str, int, float)) for v in value):
        return None
    return [str(v).strip() for v in value if str(v).strip()]


def _has_item(part: str) -> bool:
    """Whether a part of a gold names a thing of its own: a date, or a content word that is not a number, a
    calendar word, a time of day or a range's word ("Saturday" in "Saturday, 3 June 2023" does not; "between 3"
    does not)."""
    if "\x00" in part:
        return True
    return any(not w.isdigit() and w not in _CALENDAR and w not in _CLOCK_WORDS and w not in _QUALIFIERS
               for w in (w.lower() for w in re.findall(r"[A-Za-z]+", part)) if stem_set(w))


def _weak_items(gold: str) -> list[str]:
    """A gold's items between commas, "and", "&", "/" and "+", each date kept whole ("3 June, 2023"); the gold
    itself when a part names nothing of its own, unless every part is a day or a month ("Tuesday and Thursday",
    a list of golds joined with "and")."""
    dates = [m.text for m in find_dates(gold)]
    masked = gold
    for i, text in enumerate(dates):
        masked = masked.replace(text, _MASK.format(i), 1)
    parts = [p.strip(" .") for p in _WEAK.split(masked) if p.strip(" .")]
    days = all(re.fullmatch(r"[A-Za-z]+", p) and p.lower().removesuffix("s") in _CALENDAR for p in parts)
    if len(parts) < 2 or not (days or all(_has_item(p) for p in parts)):
        return [gold]
    out = []
    for part in parts:
        for i, text in enumerate(dates):
            part = part.replace(_MASK.format(i), text)
        out.append(part)
    return out


def _counted(gold: str) -> str:
    """A gold that states a count before the things counted ("Three: Portugal, Morocco and Georgia", "2 - Alex and
    Bea", "5 (Aiden, Carlos and Dev)"): the things; any other gold as it is."""
    found = re.match(r"\s*([\w.,]+)\s*(?::|\s[-–—])\s*(\S.*)$", gold, re.DOTALL) or re.match(
        r"\s*([\w.,]+)\s*\((.+)\)\s*$", gold, re.DOTALL)
    return found.group(2) if found and is_quantity(found.group(1)) else gold


_OPERATOR = re.compile(r"\s+(?:[+×x*=]|plus|times)\s+", re.IGNORECASE)


def _working(gold: str) -> list[str] | None:
    """The inputs of a quantity gold that shows its working in brackets ("EUR 720 (4 nights x EUR 180)", "$29.48
    (Netflix $15.49 + Disney+ $13.99; Hulu was cancelled)", "2 (Nov 18 and Dec 2)"): the working's items between
    ";", arithmetic operators, commas and "and"; None for any other gold."""
    found = re.match(r"\s*([^()]+?)\s*\((.+)\)\s*\.?\s*$", gold, re.DOTALL)
    if found is None or not is_quantity(found.group(1)):
        return None
    items = [item for part in _STRONG.split(found.group(2)) for operand in _OPERATOR.split(part)
             for item in _weak_items(operand.strip(" .")) if stem_set(item)]
    return items or None


def gold_pieces(gold: str) -> list[str]:
    """The items a gold lists, each needed: a list (``["Porto", "Krakow"]``), items on lines or bullets, items
    between ";" or "|" (each kept whole, commas and all), else items between commas, "and", "&", "/" and "+"
    ("Porto and Krakow", "12 May 2023 and 3 June 2023"; a date is never cut: "Saturday, 3 June 2023" is one
    item); a count stated before the items it counts ("Three: Portugal, Morocco and Georgia") is left to them, and
    a quantity that shows its working in brackets to the working's inputs (`_working`); any other gold is one
    item."""
    working = _working(gold)
    if working is not None:
        return working
    counted = _counted(gold)
    if counted != gold and len(pieces := gold_pieces(counted)) > 1:
        return pieces
    listed = _list_literal(gold)
    if listed is not None:
        return listed if len(listed) > 1 else [listed[0] if listed else gold]
    text = _BULLET.sub("\n", gold) if len(_BULLET.findall(gold)) > 1 else gold
    strong = [p.strip(" .") for p in _STRONG.split(text) if p.strip(" .") and stem_set(p)]
    if len(strong) > 1:
        return strong
    items = _weak_items(strong[0] if strong else gold)
    return items if len(items) > 1 else [gold]


def _topic(turn_text: str, question: str) -> frozenset[str]:
    return stem_set(normalise_numbers(turn_text)) & stem_set(normalise_numbers(question))


def computed_pieces(question: str, turns: Sequence[tuple[str, str, dt.date | None]]) -> list[Piece]:
    """One piece per evidence turn ``(node, text, day)`` that shares a word with the question (see the module
    docstring); the day is kept for questions about time."""
    timed = asks_time(question)
    out = []
    for node, text, day in turns:
        if not _topic(text, question):
            continue
        stated = [m for m in find_dates(text) if m.day is not None and m.month is not None and m.year is not None]
        when = dt.date(stated[0].year, stated[0].month, stated[0].day) if stated else day
        out.append(Piece(text, (node,), computed=True, day=when if timed else None, stated=bool(stated) and timed))
    return out


def _states_day(line: str, day: dt.date) -> bool:
    for m in find_dates(line):
        if m.day is None or m.month is None:
            continue
        try:
            said = dt.date(m.year or day.year, m.month, m.day)
        except ValueError:
            continue
        if abs((said - day).days) <= 1:
            return True
    return False


_DURATION = re.compile(r"^\s*(?:about\s+|around\s+|roughly\s+)?(\d+)\s+(day|night|week)s?\s*\.?\s*$",
                       re.IGNORECASE)
_MONTH = (r"(?P<month>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
          r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
_DAY_RANGE = re.compile(r"\b(?P<a>\d{1,2})\s*(?:-|–|to|until|till)\s*(?P<b>\d{1,2})\s+" + _MONTH + r"\b"
                        r"|\b" + _MONTH.replace("month", "month2") + r"\s+(?P<c>\d{1,2})\s*(?:-|–|to|until|till)\s*"
                        r"(?P<d>\d{1,2})\b", re.IGNORECASE)


def _spans(line: str) -> set[int]:
    """The numbers of days between two dates one line states: a range of days of one month ("12-16 Mar 2025",
    "July 5 to 8"), or two dates with a day and a month."""
    found = {abs(int(m.group("b") or m.group("d")) - int(m.group("a") or m.group("c")))
             for m in _DAY_RANGE.finditer(line)}
    days = []
    for m in find_dates(canonical_dates(line)):
        if m.day is not None and m.month is not None:
            try:
                days.append(dt.date(m.year or 2000, m.month, m.day))
            except ValueError:
                continue
    found |= {abs((b - a).days) for i, a in enumerate(days) for b in days[i + 1:]}
    return found


def states_duration(gold: str, text: str) -> bool:
    """Whether a text states a number of days, nights or weeks the way its inputs give it: one line's two dates (or
    range of days) that far apart ("3 nights" in "Dates: 5-8 Jul 2025")."""
    found = _DURATION.match(normalise_numbers(gold))
    if found is None:
        return False
    days = int(found.group(1)) * (7 if found.group(2).lower() == "week" else 1)
    return any(days in _spans(line) for line in text.splitlines())


_AGENT_BEFORE = frozenset("and or but by that which who whom when then because so said says told with as while if "
                          "since after before".split())
_RELATION = re.compile(r"^\s*([A-Z][a-z]+)\s+([a-z]{2,}\w*)\b")
_IRREGULAR = frozenset("paid did made took gave brought got went said told bought sold met left kept sent won lost "
                       "found taught lent owed owes drove flew wrote ran saw chose hired fired".split())


def _verb(word: str) -> bool:
    """Whether a word after a name reads as its verb (a past or present tense: "settled", "covers", "paid")."""
    return word in _IRREGULAR or (len(word) > 3 and word.endswith(("ed", "es"))) or (
        len(word) > 3 and word.endswith("s") and not word.endswith("ss"))


def turned_round(piece: str, line: str) -> bool:
    """Whether a line turns round the relation a piece states: the piece's subject is a name followed by its verb
    ("Mira settled it") and, in the line, that name only ever follows another word as its object ("Kestrel ...
    paid Mira", "... lunch for Tomas"); after "and", "by", "that", "said" and the like it is still an agent, and
    a line that starts with it is about it."""
    found = _RELATION.match(piece)
    if found is None or found.group(1).lower() in _NOT_NAMES | _CALENDAR or not _verb(found.group(2)):
        return False
    name = found.group(1)
    spots = [m.start() for m in re.finditer(rf"\b{re.escape(name)}\b", line)]
    if not spots:
        return False
    for at in spots:
        before = re.findall(r"[\w']+|[;:,.!?()\[\]\"]", _LEAD.sub("", line[:at]) if at else "")
        if not before or not re.fullmatch(r"[a-z][\w']*", before[-1]) or before[-1] in _AGENT_BEFORE:
            return False  # the subject of its clause, or an agent after "by" / "and" / "said"
    return True


def _only_the_day(line: str, day: dt.date) -> bool:
    """Whether a line is a date and nothing else, and that date is ``day``."""
    return _states_day(line, day) and not re.sub(r"[\W_]+", "", without_dates(line))


def computed_held(piece: Piece, line: str, question: str, others: Sequence[Piece]) -> bool:
    """Whether one line holds a computed piece (see the module docstring)."""
    if piece.stated and piece.day is not None and _only_the_day(line, piece.day):
        return True  # a field's bare date ("2025-03-27" under a lost field name) states the day the turn gives
    line = canonical_dates(line)  # "2025-03-04" and "4 March 2025" alike
    topic = _topic(piece.text, question)
    if overlap(topic, normalise_numbers(line)) < 0.5:
        return False
    own = stem_set(normalise_numbers(piece.text)) - stem_set(normalise_numbers(question))
    if own:
        mine = overlap(own, normalise_numbers(line))
        rivals = [overlap(stem_set(normalise_numbers(o.text)) - stem_set(normalise_numbers(question)),
                          normalise_numbers(line)) for o in others if o is not piece]
        if any(r > mine for r in rivals) or (mine < 1 / 3 and not _states_numbers(piece.text, line)):
            return False
    return piece.day is None or _states_day(line, piece.day)


def _states_numbers(turn: str, line: str) -> bool:
    """Whether a line states every number a turn states (its dates left out; "12 students" in "My beginner class
    starts next week - 12 students signed up already"): the quantity a sum or a difference is computed from."""
    numbers = set(re.findall(r"\d+(?:[.,:]\d+)*", normalise_numbers(without_dates(turn))))
    said = set(re.findall(r"\d+(?:[.,:]\d+)*", normalise_numbers(without_dates(line))))
    return bool(numbers) and numbers <= said
