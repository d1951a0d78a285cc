"""A prompt as the rules it states, each with where it sits: what `memopt.export.contradiction` compares.

`split_rules(text)` reads a prompt line by line:

- sentences of prose, bullets and numbered items, each cut at its semicolons into clauses (a clause is read as a
  rule; a report quotes the whole sentence);
- table rows: the first cell is the situation, the others what to do ("| memories conflict | use the newest |");
- JSON-ish rules: the strings of a ``{"rules": [...]}`` list and ``{"if": ..., "then": ...}`` pairs (an output
  schema or a JSON example states no rule);
- sections: a heading (``## Answer step``, ``When you are UPDATING memories:``, ``Step 2: answering.``) that names
  an operation scopes the rules under it to that operation; an item labelled with a memory operation (``ADD:``,
  ``2. **Update**:``, and the lines that continue it) is scoped to that label;
- examples are not rules: lines of a section headed "Examples", lines such as ``Input: ...``, ``User: ...``,
  ``Example (a) -- ...`` or ``"I ran" -> "Ran 5 km"``, fenced blocks and JSON that hold no rule.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from memopt.core.text import sentences

__all__ = ["RuleText", "split_rules"]

_OPERATIONS = (("extract", "extract"), ("answer", "answer"), ("updat", "update"), ("summar", "summarize"),
               ("rewrit", "query"), ("query", "query"), ("retriev", "query"), ("search", "query"))
_LABELS = {"add": "ADD", "update": "UPDATE", "delete": "DELETE", "none": "NONE", "no change": "NONE",
           "nochange": "NONE", "noop": "NONE"}
_LABEL_ITEM = re.compile(r"^(?:\d+[.)]\s*|\(\w\)\s*|[-*•]\s*)?\**\s*(?P<label>add|update|delete|none|no[ -]?change|"
                         r"noop)\s*\**\s*(?:[:\-–—]+)\s*\**\s*(?P<body>.*)$", re.IGNORECASE)
_LIST_ITEM = re.compile(r"^\s*(?:[-*•+]\s+|\d+[.)]\s+|\(\w\)\s+|[a-z][.)]\s+)")
_MD_HEADING = re.compile(r"^\s*#{1,6}\s*(?P<title>.+?)\s*#*\s*$")
_BOLD_HEADING = re.compile(r"^\s*\*\*(?P<title>[^*]{1,60})\*\*\s*:?\s*$")
_COLON_HEADING = re.compile(r"^\s*(?:[-*•]\s*|\d+[.)]\s*)?(?P<title>[^.!?:]{1,80}):\s*$")
_STEP = re.compile(r"^(?:step|stage|part|phase)\s*\d+\s*[:.\-–]\s*(?P<title>[\w /-]{1,40}?)\s*[.:]?$", re.IGNORECASE)
_EXAMPLE_LINE = re.compile(
    r"^\s*(?:[-*•]\s*)?\**\s*(?:examples?|e\.g\.|for example|for instance|input|user|assistant|system|facts|question|"
    r"q|old memory|new memory|retrieved facts|memory|memories|dialogue|conversation|session|turn|transcript)\b\s*"
    r"(?:\([^)]*\))?\s*\**\s*(?:[:\-–—]|\d+\s*:)", re.IGNORECASE)
_EXAMPLE_FOLLOW = re.compile(r"^\s*(?:[-*•]\s*)?\**\s*(?:output|answer|a|response|reply)\s*\**\s*:", re.IGNORECASE)
_ARROW = re.compile(r"->|=>|→|⇒")
_TABLE_ROW = re.compile(r"^\s*\|(?P<cells>.*)\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}")
_JSONISH = re.compile(r"^\s*(?:[\[{]\s*(?:[\"{\[\d\]}]|$)|[\]}],?\s*$|\"[^\"]*\"\s*:)")
_RULE_KEYS = {"rules", "rule", "instructions", "instruction", "guidelines", "guideline", "constraints", "constraint",
              "notes", "note", "requirements", "policy", "always", "never", "do", "dont", "don't", "steps"}
_IF_KEYS = ("if", "when", "condition", "case", "situation", "trigger")
_THEN_KEYS = ("then", "do", "action", "output", "answer", "respond", "operation", "event", "result")
_QUOTED_KEY_VALUE = re.compile(r'"(?P<key>[\w \-]{1,40})"\s*:\s*"(?P<value>(?:[^"\\]|\\.)*)"')
_RULE_LIST = re.compile(r'"(?:rules|instructions|guidelines|constraints|requirements)"\s*:\s*\[', re.IGNORECASE)
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')


@dataclass(frozen=True)
class RuleText:
    """One clause read as a rule: the sentence it is part of (as written), the clause, and where it sits."""

    sentence: str
    text: str
    section: str | None = None  # the operation a heading scopes it to: extract, answer, update, summarize, query
    label: str | None = None  # the memory operation a labelled item scopes it to: ADD, UPDATE, DELETE, NONE
    lead: str = ""  # a situation stated apart from the clause (a table row's first cell)


def _operation(title: str) -> str | None:
    low = title.lower()
    return next((operation for key, operation in _OPERATIONS if key in low), None)


def _label(title: str) -> str | None:
    return _LABELS.get(" ".join(re.findall(r"[a-z]+", title.lower())))


def _clean(line: str) -> str:
    line = re.sub(r"\*\*|__|`", "", line)
    return _LIST_ITEM.sub("", line, count=1).strip()


def _clauses(sentence: str) -> list[str]:
    return [c.strip() for c in re.split(r";\s+", sentence) if c.strip()]


def _of_sentence(sentence: str, **where: str | None) -> list[RuleText]:
    return [RuleText(sentence, clause, **where) for clause in _clauses(sentence)]  # type: ignore[arg-type]


def _words(text: str) -> int:
    return len(re.findall(r"[A-Za-z]+", text))


def _json_rules(block: str, section: str | None) -> list[RuleText]:
    """The rules a JSON-ish block states: rule lists, if/then pairs, schema values tied to their keys."""
    out: list[RuleText] = []

    def walk(value: object, key: str | None) -> None:
        if isinstance(value, dict):
            low = {str(k).lower(): v for k, v in value.items()}
            cond = next((low[k] for k in _IF_KEYS if isinstance(low.get(k), str)), None)
            then = next((low[k] for k in _THEN_KEYS if isinstance(low.get(k), str)), None)
            if cond and then:
                text = f"If {cond.rstrip('.')}, {then}"
                out.extend(_of_sentence(text, section=section))
                return
            for k, v in value.items():
                walk(v, str(k))
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, str) and key is not None and key.lower() in _RULE_KEYS and _words(value) >= 2:
            for sentence in sentences(value):
                out.extend(_of_sentence(sentence, section=section))

    try:
        walk(json.loads(block), None)
    except ValueError:  # JSON-ish, not JSON: read its "key": "value" pairs, and a rule list's strings
        for m in _QUOTED_KEY_VALUE.finditer(block):
            walk({m["key"]: m["value"]}, None)
        if not out and _RULE_LIST.search(block):
            for m in _QUOTED.finditer(block):
                if not re.match(r"\s*:", block[m.end():]):
                    walk(m[1], "rules")
    return out


def _table_row(line: str, section: str | None, label: str | None) -> list[RuleText]:
    cells = [c.strip() for c in _TABLE_ROW.match(line)["cells"].split("|")]  # type: ignore[index]
    cells = [re.sub(r"\*\*|`", "", c) for c in cells if c]
    if len(cells) < 2:
        return [RuleText(line.strip(), c, section, label) for c in cells]
    return [RuleText(line.strip(), "; ".join(cells[1:]), section, label, lead=cells[0])]


def _blocks(text: str) -> Iterator[tuple[str, str]]:
    """The prompt's lines, and each fenced block whole: ("line", text) or ("fence", text)."""
    fence: list[str] | None = None
    for line in text.splitlines():
        if line.strip().startswith("```"):
            if fence is None:
                fence = []
            else:
                yield "fence", "\n".join(fence)
                fence = None
            continue
        if fence is not None:
            fence.append(line)
        else:
            yield "line", line
    if fence is not None:
        yield "fence", "\n".join(fence)


def split_rules(text: str) -> list[RuleText]:
    """The rules of a prompt, in order (see the module docstring)."""
    rules: list[RuleText] = []
    section: str | None = None
    colon_section = False  # a "Title:" heading scopes until a blank line followed by prose
    examples = False  # under a heading that names examples
    label: str | None = None
    blank = False
    after_example = False
    header_row = True
    json_lines: list[str] = []

    def flush_json() -> None:
        if json_lines:
            rules.extend(_json_rules("\n".join(json_lines), section))
            json_lines.clear()

    for kind, line in _blocks(text):
        if kind == "fence":
            flush_json()
            if not examples:
                rules.extend(_json_rules(line, section))
            continue
        stripped = line.strip()
        if _JSONISH.match(stripped) and not _TABLE_ROW.match(stripped):
            json_lines.append(line)
            continue
        flush_json()
        if not stripped:
            blank, label, header_row = True, None, True
            continue
        colon = _COLON_HEADING.match(stripped)
        heading = _MD_HEADING.match(stripped) or _BOLD_HEADING.match(stripped) or (
            colon if colon and _words(colon["title"]) <= 6 else None)
        step = _STEP.match(stripped)
        if heading or step:
            title = (heading or step)["title"]  # type: ignore[index]
            examples = bool(re.search(r"example|few[- ]shot|sample|demonstration|illustration", title, re.I)) and \
                not (heading and heading.re is _COLON_HEADING)  # "Here are some examples:" ends with its examples
            if _label(title):
                label = _label(title)
            else:
                label = None
                is_colon = bool(heading and heading.re is _COLON_HEADING)
                section = _operation(title) if not examples else section
                colon_section = is_colon and section is not None
            blank = after_example = False
            continue
        if blank and colon_section and not _LIST_ITEM.match(line) and not _TABLE_ROW.match(stripped):
            section, colon_section = None, False
        blank = False
        if examples:
            continue
        if _EXAMPLE_LINE.match(stripped) or _ARROW.search(stripped) or (after_example and
                                                                        _EXAMPLE_FOLLOW.match(stripped)):
            after_example = True
            if _LIST_ITEM.match(line):
                label = None
            continue
        after_example = False
        if _TABLE_ROW.match(stripped):
            if _TABLE_RULE.match(stripped.strip("|").strip()):
                continue
            row = _table_row(stripped, section, label)
            if header_row:  # a table's first row names its columns, unless it reads as a rule
                header_row = False
                if all(_words(r.text) <= 3 for r in row) and _words(row[0].lead) <= 3:
                    continue
            rules.extend(row)
            continue
        labelled = _LABEL_ITEM.match(stripped)
        if labelled and _words(labelled["body"]) >= 1:
            label = _label(labelled["label"])
            body = _clean(labelled["body"])
        elif _LIST_ITEM.match(line):
            label, body = None, _clean(line)
        else:
            body = _clean(line)
        for sentence in sentences(body):
            step_in = _STEP.match(sentence)
            if step_in:
                section = _operation(step_in["title"]) or section
                continue
            rules.extend(_of_sentence(sentence, section=section, label=label))
    flush_json()
    return rules
