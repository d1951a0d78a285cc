"""The layouts feedback comes in, written as the labelled lines `memopt.simlm.examples` reads (used only there).

`as_lines` brings every layout to one: paragraphs of ``label: value`` lines, a label alone on its line heading the
lines indented below it (`section_hints` says which heading each line is under).

- Punctuation and markup: full-width colons and French ' : ' become ': '; « », „ “, ‹ ›, 「 」, 『 』, a code span
  of words and an *emphasis* in running text become “ ” quotes; a line that is only emphasis is a heading; bold,
  code marks and emoji shortcodes go; '<tag>x</tag>' is 'tag: x'; ('Xavi', 'I went ...') is 'Xavi: “I went ...”';
  HTML is its text (its tables Markdown tables).
- Records, one paragraph each: a JSON object (its keys the labels, an object or list inside it the lines under
  its key; an object that asks a question inside a list is an example of its own), a table row under its header
  (Markdown, tab-, semicolon- or comma-separated), a line of key=value pairs (logfmt), a unified diff (hunk
  headers, what the old side '--- expected' had and the new side '+++ actual' has, comments).
"""

from __future__ import annotations

import csv
import html
import itertools
import json
import re
from typing import Any

from memopt.core.text import words
from memopt.simlm.example_families import families
from memopt.simlm.example_markup import (
    HEADING,
    prose_marks,
    sql_records,
    tag_label,
    tool_markup,
    vertical_record,
)
from memopt.simlm.example_parts import CUES, QUESTION

__all__ = ["as_lines", "key_words", "section_hints", "BULLET", "HEADING", "LABEL"]

# a list marker: a bullet, a number, a letter or roman numeral in parentheses; a checkbox after it ('- [ ] task')
BULLET = re.compile(r"^\s*(?:[-*•+>–—◦‣·▪]+|\d+[.)]|\((?:\w|[ivx]{1,4}|\d{1,2})\))\s+(?:\[[ xX]\]\s+)?")
LABEL = re.compile(r"^(?P<label>[^\W\d_][\w '/()#.·-]{0,60}?)\s*(?::|(?<![=!<>])=(?![=>])|\s[-–—]+>?(?=\s)|=>)\s*"
                   r"(?P<rest>.*)$")  # 'a == b' is no label
_QUOTES = str.maketrans({"«": "“", "»": "”", "„": "“", "「": "“", "」": "”", "『": "“",
                         "』": "”", "：": ":"})
_TAG = re.compile(r"<(?P<tag>[A-Za-z][\w-]*)(?P<attrs>(?:\s+[\w:-]+=\"[^\"]*\")*)\s*>(?P<body>[^<>\n]*)</(?P=tag)>")
_ASKED = re.compile(r"(?im)^\W*([^\W\d_][\w ]{0,30}?)\s*[:=]\s*(?:when|what|where|who|whom|whose|which|why|how)\b"
                    r"[^?\n]*[^?\s.:]\s*$")  # a question without its mark under a label that says it asks
_INDEX = re.compile(r"\[\d+\]")  # "wrote[0]"
_SPEAKER_PAIR = re.compile(r"\(\s*([\"'])([A-Z][\w'-]*)\1\s*,\s*([\"'])(.{3,400}?)\3\s*\)")
_SPANS = re.compile(r"`([^`\n]+)`|(?<![\w*])\*(?=[^\s*])([^*\n]+?)(?<=\S)\*(?![\w*])|\*\*([^*\n]+)\*\*")
_IDENTIFIER = re.compile(r"^\S*[._(/\d]\S*$|^[A-Z][a-z]+[A-Z]\w*$")  # mem0.extract, S1, ExtractionError
# key="value" or key=value ('src.speaker=Xavi', 'wrote[0]="..."', 'question="..."; expected="..."')
_PAIR = re.compile(r"(?<![\w\"])(?:([A-Za-z_][\w .\[\]-]{0,30}?)\s*=\s*\"([^\"\n]*)\"|"
                   r"([A-Za-z_][\w.\[\]-]*)=([^\s\"]+?))[;,]?(?=\s|$)")


def _span(m: re.Match[str]) -> str:
    """A `code span` is a quote unless it is an identifier ('mem0.extract'); an *emphasis* is a quote in running text;
    on a line of its own an emphasis or a **bold** is a heading, or a label when it ends with a colon."""
    if m[1] is not None:
        return m[1] if _IDENTIFIER.match(m[1].strip()) else f"“{m[1]}”"
    inner = m[2] or m[3]
    start, end = m.string.rfind("\n", 0, m.start()) + 1, m.string.find("\n", m.end()) % (len(m.string) + 1)
    if not (m.string[start:m.start()] + m.string[m.end():end]).strip():
        return inner if inner.rstrip().endswith(":") else f"### {inner}"
    lead = BULLET.sub("", m.string[start:m.start()].split("|")[-1]).strip()  # a bold value inside a sentence
    after = m.string[m.end():end].split("|")[0]  # (not a table's cell) is a quote
    inside = re.search(r"\w", re.sub(r"<[^>]*>", "", lead)) and not after.startswith(":") and \
        (re.search(r"\w", after) or not lead.endswith(":"))  # '**Xavi**: ...' names a speaker
    return inner if m[3] and not inside or inner.rstrip().endswith(":") \
        else f"“{inner}”"


def _key_values(line: str) -> str:
    """A line of two or more key=value pairs as a paragraph of 'key: value' lines ('wrote[0]' → 'wrote')."""
    pairs = _PAIR.findall(line)
    if len(pairs) < 2 or _PAIR.sub("", line).strip(" \t;,"):
        return line
    said = [f"{key_words(_INDEX.sub('', key or bare_key))}: {q if key else bare}" for key, q, bare_key, bare in pairs]
    return "\n" + "\n".join(said) + "\n"


def _markdown_table(table: str) -> str:
    """An HTML table as a Markdown one, its first row the header."""
    cells = r"(?is)<t[dh][^>]*>(.*?)</t[dh]>"
    rows = [[html.unescape(re.sub(r"<(?!br)[^>]+>", " ", c)).strip() for c in re.findall(cells, row)]
            for row in re.findall(r"(?is)<tr[^>]*>(.*?)</tr>", table)]
    lines = ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join([lines[0], "|" + "---|" * len(rows[0]), *lines[1:]]) if rows else ""


def _html(text: str) -> str:
    """HTML without tags and entities: its tables as Markdown ones, paragraphs and breaks as lines."""
    tables = [_markdown_table(m[0]) for m in re.finditer(r"(?is)<table.*?</table>", text)]
    text = re.sub(r"(?is)<table.*?</table>", "\0", text)
    text = html.unescape(re.sub(r"<[^>\n]+>", "", re.sub(r"(?i)<br\s*/?>|</(?:p|li|div|h\d)>", "\n", text)))
    for table in tables:
        text = text.replace("\0", f"\n{table}\n", 1)
    return text


_POINTED = re.compile(r"^([ \t]*[^\W\d_][\w ]{0,30}?)[ \t]+>[ \t]+(?=\S)", re.M)  # 'want   > X': a label


def _normalize(text: str) -> str:
    text = re.sub(r"<!\[CDATA\[|\]\]>", "\n", text)  # a CDATA section is its text
    if len(_POINTED.findall(text)) > 1:  # lines of labels pointing at their values
        text = _POINTED.sub(r"\1: ", text)
    text = tool_markup(families(text))
    text = _html(text) if re.search(r"(?i)</(?:td|p|li|div)>", text) else text
    text = _TAG.sub(lambda m: f"{tag_label(m)}: {m.group('body').strip()}", text)
    text = re.sub(r"^\s*</?[A-Za-z][\w-]*>\s*$", "", text, flags=re.M)  # a bare opening or closing tag
    text = re.sub(r"(?<![\w:]):[a-z0-9_+-]+:(?![\w:])", "", text)  # an emoji shortcode (':face_palm:')
    text = _SPANS.sub(_span, text)
    text = re.sub(r"„([^“”„\n]*)[“”]|‹([^‹›\n]*)›", r"“\1\2”", text).translate(_QUOTES)  # a lone › points
    text = _SPEAKER_PAIR.sub(r"\2: “\4”", text)  # ('Xavi', 'I adopted a rabbit'): a speaker and the words
    text = re.sub(r"“[ \t]+", "“", re.sub(r"[ \t]+”", "”", text))
    text = prose_marks(text)
    text = re.sub(r"(?<=\w) :(?=\s)", ":", text)
    text = re.sub(r":(?=[^\s/\d])", ": ", text)  # 'Question:«...' → 'Question: “...'
    text = _ASKED.sub(lambda m: f"{m[0]}?" if CUES["asked"].search(m[1]) else m[0], text)  # 'Query: what did ...'
    return "\n".join(_key_values(line) for line in re.sub(r"\*\*|__|`", "", text).split("\n"))


# --- records as labelled lines --------------------------------------------------------------------------------------


def key_words(key: str) -> str:
    """A key's words ('sourceSpeaker', 'src.speaker', 'stage_out' → 'source Speaker', 'src speaker', 'stage output';
    a class name stays whole: 'AssertionError')."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", key) if key[:1].islower() else key
    return re.sub(r"\b(in|out)$", r"\1put", " ".join(re.sub(r"[_.\-]", " ", spaced).split()))


def _value(value: Any) -> str:
    """A scalar as text; a question written without its mark gets one ('what did Zane visit' → '...?')."""
    text = " ".join(str(value).split())
    asks = re.match(r"^(when|what|where|who|which|how)\b", text, re.I) and len(words(text)) >= 3
    return f"{text}?" if asks and "?" not in text else text


def _asks(value: Any) -> bool:
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return any(_asks(v) for v in value)
    return isinstance(value, str) and bool(QUESTION.search(_value(value)))


def _lines(record: dict, pad: str, examples: list[list[str]]) -> list[str]:
    """An object's lines: 'key: value', or 'key:' over the lines of an object or a list ('Name: words' for a
    [name, words] pair); an object inside a list that asks a question goes to ``examples``, a paragraph of its own."""
    out: list[str] = []
    for key, value in record.items():
        inner: list[str] = []
        for item in value if isinstance(value, list) else [value] if isinstance(value, dict) else []:
            if isinstance(item, dict) and isinstance(value, list) and _asks(item):
                examples += _paragraphs(item)
            elif isinstance(item, dict):
                inner += _lines(item, f"{pad}  ", examples)
            elif isinstance(item, list) and len(item) == 2 and all(isinstance(x, str) for x in item):
                inner.append(f"{pad}  {item[0]}: {_value(item[1])}")
            elif item is not None and str(item).strip():
                inner.append(f"{pad}  {_value(item)}")
        if isinstance(value, (dict, list)):
            out += [f"{pad}{key_words(str(key))}:", *inner] if inner else []
        elif value is not None and not isinstance(value, bool) and str(value).strip():
            out.append(f"{pad}{key_words(str(key))}: {_value(value)}")
    return out


def _paragraphs(value: Any) -> list[list[str]]:
    """A structured value as paragraphs of labelled lines: an object's own, then the examples inside it."""
    if isinstance(value, list):
        return [p for v in value for p in _paragraphs(v)]
    if not isinstance(value, dict):
        return []
    examples: list[list[str]] = []
    own = _lines(value, "", examples)
    return ([own] if own else []) + examples


def _json_values(text: str) -> list[tuple[int, int, Any]]:
    """JSON objects and arrays embedded in the text, as (start, end, value)."""
    decoder, out, i = json.JSONDecoder(), [], 0
    while i < len(text):
        if text[i] in "{[":
            try:
                value, end = decoder.raw_decode(text, i)
            except ValueError:
                value, end = None, i + 1
            if isinstance(value, (dict, list)) and _paragraphs(value):
                out.append((i, end, value))
            i = end
        else:
            i += 1
    return out


# --- tables -------------------------------------------------------------------------------------------------------

_COLUMN = re.compile(r"^(?:[^\W\d][\w .#/()'-]{0,40}|#?)$")  # a column's name: a few words, or none ('#')
_RULE = re.compile(r"^[ \t]*\|[ \t:|-]+\|[ \t]*$")  # a Markdown table's rule under its header


def _cells(line: str, sep: str) -> list[str]:
    """A row's cells: between '|' (a Markdown row), or split by a tab, a semicolon or a comma (CSV quoting), at least
    three."""
    if sep == "|":
        row = line.strip()
        return [c.strip() for c in row[1:-1].split("|")] if len(row) > 1 and row[0] == row[-1] == "|" else []
    cells = next(csv.reader([line], delimiter=sep), []) if sep in line else []
    return [c.strip() for c in cells] if len(cells) >= 3 else []


def _cell(cell: str) -> str | list[str]:
    parts = [p.strip() for p in re.split(r"<br\s*/?>|;\s+(?=[A-Z\[“\"'])", cell) if p.strip()]
    return parts if len(parts) > 1 else cell


def _tables(text: str) -> list[tuple[int, int, Any]]:
    """Tables of rows under a header of column names: Markdown (under its rule), tab-, semicolon- or comma-separated
    (as many cells as the header), each as a list of {column: cell}."""
    out, lines, i = [], text.split("\n"), 0
    starts = [0, *itertools.accumulate(len(line) + 1 for line in lines)]  # where each line starts in the text
    while i < len(lines):
        for sep in "|\t;,":
            header = _cells(lines[i], sep)
            if not header or not all(_COLUMN.match(h) or sep == "|" and h.isdigit() for h in header) or \
                    (sep == "|" and not (i + 1 < len(lines) and _RULE.match(lines[i + 1]))) or \
                    sep in ";," and (any(len(h.split()) > 3 for h in header) or  # 'should be a, b c, d', 'expected
                                     not re.search(rf"{sep}(?!\s)", lines[i])):  # X, we answer Y, Z': lists in prose
                continue
            j, rows, read = i + 1 + (sep == "|"), [], csv.reader((f"{line}\n" for line in lines[i + 1:]), delimiter=sep)
            for cells in (_cells(line, sep) for line in lines[j:]) if sep == "|" else read:  # a quoted cell may span
                if not cells or sep != "|" and len(cells) != len(header):  # lines in a CSV
                    break
                rows.append({h: _cell(c.strip()) for h, c in zip(header, cells, strict=False)
                             if c.strip() and h.strip("# ").lower() not in ("", "no", "id", "n")})
                j = j + 1 if sep == "|" else i + 1 + read.line_num
            if sep == "|" and (record := vertical_record(header, rows)) is not None:
                rows = [record]
            if rows:
                out.append((starts[i], starts[j] - 1, rows))
                i = j - 1
                break
        i += 1
    return out


# --- diffs --------------------------------------------------------------------------------------------------------

_DIFF = re.compile(r"(?m)^(?:diff .*\n)?(?:index .*\n)?(?:(?:---|\+\+\+) .*\n){0,2}@@.*@@.*"
                   r"(?:\n(?!--- .*\n\+\+\+ )(?:[-+ #@\\].*|index .*))*")


def _diffs(text: str) -> list[tuple[int, int, Any]]:
    """Unified diffs, each a record: a hunk's header is a field ('@@ answer to: When ...? @@'), its lines are what
    the old side ('--- expected') had and the new side ('+++ actual') has under the hunk's words, unchanged lines the
    hunk's, '# label: text' comments fields, a trailing '  # note' an aside."""
    out = []
    for m in _DIFF.finditer(text):
        record: dict[str, list[str]] = {}
        sides, hunk = {"-": "before", "+": "after"}, ""
        for line in m.group(0).splitlines():
            line = re.sub(r"\s{2,}#\s*(.*)$", r" (\1)", line.rstrip())
            side = re.match(r"^(---|\+\+\+) (?:[ab]/)?(.*)$", line)
            if side:
                sides[side.group(1)[0]] = f"{side.group(2)} {sides[side.group(1)[0]]}"
            elif line.startswith("@@"):
                hunk = line.strip("@ ")
                key, _, value = hunk.partition(": ")
                if value or hunk.endswith("?"):  # '@@ Which ...? @@': the question itself, its lines its sides'
                    record.setdefault(key if value else "question", []).append(value or hunk)
                    hunk = hunk if value else ""
            elif line[:1] in "-+ " and line[1:].strip():
                record.setdefault(f"{hunk.partition(':')[0]} {sides.get(line[0], '')}".strip(), []).append(line[1:])
            elif line.startswith("#"):
                key, _, value = line.strip("# ").partition(": ")
                record.setdefault(key if value else "comment", []).append(value or key)
        out.append((m.start(), m.end(), record))
    return out


def as_lines(text: str) -> str:
    """The text with its markup normalized and every record written as a paragraph of labelled lines."""
    text = _normalize(text)
    out, at = [], 0
    records = sql_records(text) + _json_values(text) + _tables(text) + _diffs(text)  # SQL first: its column list
    for start, end, value in sorted(records, key=lambda b: b[0]):  # is no CSV header
        if start >= at:
            out += [text[at:start], *("\n\n" + "\n".join(p) + "\n\n" for p in _paragraphs(value))]
            at = end
    return "".join([*out, text[at:]])


def section_hints(lines: list[str]) -> list[str]:
    """Each line's section: the label of a header line ('Conversation:') over the lines below it that are indented
    deeper (or bulleted under an unbulleted header), or a short Markdown heading ('### Expected') over every line up
    to the next heading; a Markdown quote ('> Q: ...') is quoted (a conversation, or the question asked)."""
    hints, section, depth, bulleted, heading = [], "", 0, False, False
    for line in lines:
        indent = len(line) - len(line.lstrip())
        title = HEADING.match(line)
        label = LABEL.match(BULLET.sub("", line).strip())
        inside = section and (heading or indent > depth or (indent == depth and not bulleted and
                                                            bool(BULLET.match(line))))
        hints.append(f"{section if inside and not title else ''}{' blockquote' if line.lstrip()[:1] == '>' else ''}"
                     .strip())
        if title:
            section, heading = title.group(1), True
        elif label and not label.group("rest").strip():
            section, depth, bulleted, heading = label.group("label"), indent, bool(BULLET.match(line)), False
        elif not inside:
            section = ""
    return hints
