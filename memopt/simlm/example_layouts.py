"""The layouts feedback comes in, brought to what `memopt.simlm.examples` reads (used only there).

- `normalize`: other languages' punctuation and light markup as plain text: full-width colons '：' and
  French ' : ' become ': '; « », „ “, ‹ ›, 「 」 and 『 』 become “ ”; Markdown bold and code marks go.
- `structured_blocks`: the structured parts of a text as values, like JSON: Markdown tables (a list of
  rows, each {column header: cell}; a cell's '<br>' or ';' separated parts a list) and YAML-ish blocks
  (``- key: value`` items with indented keys and lists), each as (start, end, value).
- `label_of`: a line's leading label ("Question:", "Q -", "Correct answer =>"), and `LABEL_WORDS`, the
  generic words that label a question or an answer ('Q', 'A', 'Asked', 'Query') and are no speaker's name
  unless the text around says it is a turn of the conversation.
"""

from __future__ import annotations

import csv
import re
from typing import Any

from memopt.simlm.example_parts import CUES

__all__ = ["normalize", "structured_blocks", "TURN", "ERROR_NAME", "error_or_op"]

TURN = re.compile(r"^(?P<who>[A-Z][\w'-]*(?: [A-Z][\w'-]*)?)\s*(?:\([^)]{0,30}\))?:\s+(?P<text>\S.*)$")  # 'Name: text'
ERROR_NAME = re.compile(r"\b[A-Z][a-z]+(?:[A-Z][a-z]+)*(?:Error|Failure|Fault)\b")
_OP_NAME = re.compile(r"\b(?:blamed on|blame falls on|blame goes to|caused by|fault of|in|at)\s+(?:the\s+)?"
                      r"([a-z][\w-]*\.[a-z][\w.-]*)")

_QUOTES = str.maketrans({"«": "“", "»": "”", "„": "“", "‹": "“", "›": "”", "「": "“", "」": "”", "『": "“",
                         "』": "”", "：": ":"})
_LABEL = re.compile(r"^(?P<label>[A-Za-z][\w '/()#.-]{0,40}?)\s*(?:[:=]|\s[-–—]+>?(?=\s)|=>)\s*(?P<rest>.*)$")


_TAG = re.compile(r"<(?P<tag>[A-Za-z][\w-]*)(?:\s+[\w-]+=\"(?P<who>[^\"]*)\")?\s*>(?P<body>[^<>\n]*)</(?P=tag)>")
# key="value" or key=value ('src.speaker=Xavi', 'wrote[0]="..."', 'question="..."; expected="..."')
_PAIR = re.compile(r"(?<![\w\"])(?:([A-Za-z_][\w .\[\]-]{0,30}?)\s*=\s*\"([^\"\n]*)\"|"
                   r"([A-Za-z_][\w.\[\]-]*)=([^\s\"]+?))[;,]?(?=\s|$)")


_SPEAKER_PAIR = re.compile(r"\(\s*([\"'])([A-Z][\w'-]*)\1\s*,\s*([\"'])(.{3,400}?)\3\s*\)")


_SPANS = re.compile(r"`([^`\n]+)`|(?<![\w*])\*(?=[^\s*])([^*\n]+?)(?<=\S)\*(?![\w*])|\*\*([^*\n]+)\*\*")
_IDENTIFIER = re.compile(r"^\S*[._(/\d]\S*$|^[A-Z][a-z]+[A-Z]\w*$")  # mem0.extract, S1, ExtractionError


def _span(m: re.Match[str]) -> str:
    """A `code span` is a quote unless it is an identifier ('mem0.extract'); an *emphasis* is a quote in running text;
    on a line of its own an emphasis or a **bold** is a heading, or a label when it ends with a colon."""
    if m[1] is not None:
        return m[1] if _IDENTIFIER.match(m[1].strip()) else f"“{m[1]}”"
    inner = m[2] or m[3]
    start, end = m.string.rfind("\n", 0, m.start()) + 1, m.string.find("\n", m.end()) % (len(m.string) + 1)
    if not (m.string[start:m.start()] + m.string[m.end():end]).strip():
        return inner if inner.rstrip().endswith(":") else f"### {inner}"
    return inner if m[3] or inner.rstrip().endswith(":") else f"“{inner}”"


def _tagged(m: re.Match[str]) -> str:
    """'<expected>Milo</expected>' → 'expected: Milo'; '<turn speaker="Zane">...</turn>' → 'Zane: ...'."""
    return f"{m.group('who') or m.group('tag')}: {m.group('body').strip()}"


def normalize(text: str) -> str:
    """Plain punctuation and no Markdown emphasis (see the module docstring); XML-ish tags as labelled lines."""
    text = _TAG.sub(_tagged, text)
    text = re.sub(r"^\s*</?[A-Za-z][\w-]*>\s*$", "", text, flags=re.M)  # a bare opening or closing tag
    text = re.sub(r"(?<![\w:]):[a-z0-9_+-]+:(?![\w:])", "", text)  # an emoji shortcode (':face_palm:')
    text = _SPANS.sub(_span, text)
    text = re.sub(r"„([^“”„\n]*)[“”]", r"“\1”", text).translate(_QUOTES)
    text = _SPEAKER_PAIR.sub(r"\2: “\4”", text)  # ('Xavi', 'I adopted a rabbit'): a speaker and the words
    text = re.sub(r"“[ \t]+", "“", re.sub(r"[ \t]+”", "”", text))
    text = re.sub(r"(?<=\w) :(?=\s)", ":", text)
    text = re.sub(r":(?=[^\s/\d])", ": ", text)  # 'Question:«...' → 'Question: “...'
    return re.sub(r"\*\*|__|`", "", text)


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


# --- tables ------------------------------------------------------------------------------------------------------


_COLUMN = re.compile(r"^(?:[^\W\d][\w .#/()'-]{0,40}|#?)$")  # a column's name: a few words, or none ('#')
_RULE = re.compile(r"^[ \t]*\|[ \t:|-]+\|[ \t]*$")  # a Markdown table's rule under its header


def _cells(line: str, sep: str) -> list[str]:
    """A row's cells: between '|' (a Markdown row), or split by a tab or a comma (CSV quoting), at least three."""
    if sep == "|":
        row = line.strip()
        return [c.strip() for c in row[1:-1].split("|")] if len(row) > 1 and row[0] == row[-1] == "|" else []
    cells = next(csv.reader([line], delimiter=sep), []) if sep in line else []
    return [c.strip() for c in cells] if len(cells) >= 3 else []


def _cell_value(cell: str) -> str | list[str]:
    parts = [p.strip() for p in re.split(r"<br\s*/?>|;\s+(?=[A-Z\[“\"'])", cell) if p.strip()]
    return parts if len(parts) > 1 else cell


def _tables(text: str) -> list[tuple[int, int, Any]]:
    """Tables of rows under a header of column names: Markdown (under its rule), tab- or comma-separated (as many
    cells as the header), each as a list of {column: cell}."""
    out, lines = [], text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    i = 0
    while i < len(lines):
        for sep in "|\t,":
            header = _cells(lines[i], sep)
            if not header or not all(_COLUMN.match(h) for h in header):
                continue
            j = i + 1 + (sep == "|")
            if sep == "|" and not (i + 1 < len(lines) and _RULE.match(lines[i + 1])):
                continue
            rows = []
            while j < len(lines) and (cells := _cells(lines[j], sep)) and (sep == "|" or len(cells) == len(header)):
                rows.append({h: _cell_value(c) for h, c in zip(header, cells, strict=False)
                             if c and h.strip("# ").lower() not in ("", "no", "id", "n")})
                j += 1
            if rows:
                out.append((starts[i], starts[j] - 1, rows))
                i = j - 1
                break
        i += 1
    return out


# --- YAML-ish blocks -----------------------------------------------------------------------------------------------

_KEY = re.compile(r"^(?P<key>[A-Za-z_][\w .'/()-]{0,40}?):(?:\s+(?P<value>.*))?$")


def _scalar(text: str) -> str:
    text = text.strip()
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'" else text


def _parse(lines: list[tuple[int, str]], i: int, indent: int) -> tuple[Any, int]:
    """The value of the block starting at line ``i`` (lines at ``indent`` or deeper), and the next line."""
    if lines[i][1].startswith("- "):
        items = []
        while i < len(lines) and lines[i][0] == indent and lines[i][1].startswith("- "):
            rest = lines[i][1][2:].strip()
            if _KEY.match(rest):  # a mapping starting on the item's line
                sub = [(indent + 2, rest), *[ln for ln in _deeper(lines, i + 1, indent)]]
                value, _ = _parse(sub, 0, indent + 2)
                i += len(sub)
            else:
                value, i = _scalar(rest), i + 1
            items.append(value)
        return items, i
    mapping: dict[str, Any] = {}
    while i < len(lines) and lines[i][0] == indent and (m := _KEY.match(lines[i][1])):
        if m.group("value"):
            mapping[m.group("key").strip()], i = _scalar(m.group("value")), i + 1
        elif i + 1 < len(lines) and (lines[i + 1][0] > indent or lines[i + 1][1].startswith("- ")):
            mapping[m.group("key").strip()], i = _parse(lines, i + 1, lines[i + 1][0])
        else:
            i += 1
    return mapping, i


def _deeper(lines: list[tuple[int, str]], i: int, indent: int) -> list[tuple[int, str]]:
    out = []
    while i < len(lines) and lines[i][0] > indent:
        out.append(lines[i])
        i += 1
    return out


def _yaml_blocks(text: str) -> list[tuple[int, int, Any]]:
    """YAML-ish blocks: paragraphs of ``key: value`` lines with at least one ``- key: value`` item."""
    out = []
    for m in re.finditer(r"(?:^|\n)((?:[ \t]*\S[^\n]*(?:\n|$))+)", text):
        block = m.group(1)
        raw = [ln for ln in block.splitlines() if ln.strip()]
        if not any(re.match(r"^\s*-\s+[A-Za-z_][\w ]{0,30}:(\s|$)", ln) for ln in raw):
            continue
        if not all(_KEY.match(ln.strip().removeprefix("- ")) or ln.strip().startswith("- ") for ln in raw):
            continue
        lines = [(len(ln) - len(ln.lstrip()), ln.strip()) for ln in raw]
        try:
            value, used = _parse(lines, 0, lines[0][0])
        except (IndexError, ValueError):
            continue
        if used == len(lines):
            out.append((m.start(1), m.start(1) + len(block), value))
    return out


def _key_values(text: str) -> list[tuple[int, int, Any]]:
    """Lines of two or more key=value pairs (a logfmt line, 'a="x"; b="y"'), each a record; 'k[0]', 'k[1]' a list."""
    out = []
    for line in re.finditer(r"[^\n]+", text):
        pairs = _PAIR.findall(line.group(0))
        if len(pairs) < 2 or _PAIR.sub("", line.group(0)).strip(" \t;,"):
            continue
        record: dict[str, Any] = {}
        for key, quoted, bare_key, bare in pairs:
            key, value = (key or bare_key).strip(), quoted if key else bare
            item = re.fullmatch(r"(.+?)\[\d+\](.*)", key)
            if item:
                record.setdefault(item.group(1) + item.group(2), []).append(value)
            else:
                record[key] = value
        out.append((line.start(), line.end(), record))
    return out


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
                if value:
                    record.setdefault(key, []).append(value)
            elif line[:1] in "-+ " and line[1:].strip():
                record.setdefault(f"{hunk.partition(':')[0]} {sides.get(line[0], '')}".strip(), []).append(line[1:])
            elif line.startswith("#"):
                key, _, value = line.strip("# ").partition(": ")
                record.setdefault(key if value else "comment", []).append(value or key)
        out.append((m.start(), m.end(), record))
    return out


def structured_blocks(text: str) -> list[tuple[int, int, Any]]:
    """Markdown, CSV and TSV tables, YAML-ish blocks and key=value lines of the text as (start, end, value), in
    order, not overlapping."""
    found = sorted(_tables(text) + _yaml_blocks(text) + _key_values(text) + _diffs(text))
    out: list[tuple[int, int, Any]] = []
    for start, end, value in found:
        if not out or start >= out[-1][1]:
            out.append((start, end, value))
    return out
