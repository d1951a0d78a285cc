"""The markup of other people's tools, brought to the lines `memopt.simlm.example_layouts` reads (used only there).

Each piece says what a writer's layout *is*, never a tool's labels: wiki markup (Jira, Confluence: 'h3.' headings,
{quote} blocks, {{values}}, '#' lists), ASCII tables with '+----+' borders, a two-column table of labels and values
as one record, a chat line's time and user handle (the people discussing the examples), an event's leading time, a
log line's level and columns, protobuf-text blocks, SQL INSERT rows, and in prose: British single quotes, dot leaders
('stage ..... x'), inline enumerators ('(i) X; (ii) Y') and run-in headings ('Criteria. The correct ...').
"""

from __future__ import annotations

import re
from typing import Any

from memopt.core.text import STOPWORDS
from memopt.simlm.example_parts import CUES

__all__ = ["HEADING", "prose_marks", "sql_records", "tag_label", "tool_markup", "vertical_record"]

HEADING = re.compile(r"^\s*#{1,6}\s+((?:[A-Za-z][\w'/.-]*\s*){1,5})$")  # '### Expected': a section of its own
# a chat line's time and user handle (lower case, '@maya', '<maya>'): the people discussing the examples, no speaker
_HANDLE = re.compile(r"(?m)^[ \t]*(?:[\[(]?\d{1,2}:\d{2}(?::\d{2})?(?:\s*[AaPp][Mm])?[\])]?[ \t]+"
                     r"(?:<?@?[a-z][\w.-]*>?):|<@?[a-z][\w.-]*>)[ \t]+")
_CLOCK = re.compile(r"(?m)^[ \t]*[\[(]?(?:T\s?[+-]\s?\d+\s?[smhd]?|\d{1,2}:\d{2}(?::\d{2})?(?:\.\d+)?"
                    r"(?:\s?[AaPp][Mm])?|\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2})?\S*)[\])]?"
                    r"(?:[ \t]{2,}|[ \t]+[-–—|][ \t]+|[ \t]+(?=\S))")
_LEVEL = re.compile(r"^\s*(?:E|INFO|WARNING|WARN|DEBUG|ERROR|CRITICAL|FATAL|TRACE|NOTICE)(?:\s{2,}|\s*\|\s*)")
_BLOCK = re.compile(r"(?m)^([ \t]*)([A-Za-z_][\w.]*)[ \t]*(?::[ \t]*)?\{[ \t]*$\n?")
_SPOKEN_QUOTE = re.compile(r"(?i)\b(?:open )?quote[,:]?\s+(.+?)[,.]?\s+(?:end quote|unquote|close quote)\b")
_RUN_IN = re.compile(r"(?m)^(?P<pad>\s*)(?P<head>[A-Z][a-z]{3,}(?: [a-z]{3,}){0,2})\.[ \t]+(?=[A-Z‘“\"'(])")
_SINGLE = re.compile(r"[‘‚]((?:[^‘’\n]|’(?=\w))+)’(?!\w)")  # single curly quotes, British style
_ATTR = re.compile(r"([\w:-]+)=\"([^\"]*)\"")


def tag_label(m: re.Match[str]) -> str:
    """An element's label: its one attribute's value ('<turn speaker="Xavi">'), the value of the attribute naming who
    spoke when it has several, else its tag ('<operation system="mem0" step="answer">' is 'operation')."""
    attrs = _ATTR.findall(m["attrs"] or "")
    who = [v for k, v in attrs if CUES["turn"].fullmatch(k) or k.lower() in ("who", "name", "from", "author", "by")]
    return attrs[0][1] if len(attrs) == 1 else who[0] if who else m["tag"]


def _log_line(line: str) -> str:
    """A log line: its level ('INFO', pytest's 'E') goes, and its columns (two or more spaces apart) label the last
    ('INFO  mem0.extract  emitted  Alex met ...' → 'mem0.extract emitted: Alex met ...'); a rule of dashes or
    underscores around a title ('____ test_x ____', 'Captured log call -----') goes."""
    if "|" not in line and re.search(r"[A-Za-z]", line):
        ruled = re.fullmatch(r"\s*[-=_]{4,}\s+([A-Za-z][\w ]{0,40}?)\s+[-=_]{4,}\s*", line)
        line = f"### {ruled[1]}" if ruled else re.sub(r"(?:(?<=\s)|^)[-=_]{4,}(?=\s|$)", "", line).rstrip()
    level = _LEVEL.match(line)
    if not level:
        return line
    columns = re.split(r"\s{2,}", line[level.end():].strip())
    return f"{' '.join(columns[:-1])}: {columns[-1]}" if len(columns) > 1 else columns[0]


def _run_in(m: re.Match[str]) -> str:
    """A run-in heading ('Condition. When ...', 'Source record. Xavi stated ...') as a label: a noun phrase of one to
    three words, none a function word, standing as a sentence of its own at the start of a line."""
    if any(w.lower() in STOPWORDS for w in m["head"].split()):
        return m[0]
    return f"{m['pad']}{m['head']}: "


def _wiki(text: str) -> str:
    """Wiki markup (Jira, Confluence, Textile) as Markdown: 'h3. Title' a heading, a {quote} block quoted lines,
    {{value}} a code span, _words_ an emphasis, a run of '# item' lines (or one too long for a heading) a list."""
    text = re.sub(r"(?m)^h[1-6]\.\s+(?=\S)", "### ", text)
    text = re.sub(r"\{(?:quote|code|noformat)(?::[^}]*)?\}\n?(.*?)\{(?:quote|code|noformat)\}",
                  lambda m: "".join(f"> {line}\n" for line in m[1].splitlines() if line.strip()), text, flags=re.S)
    text = re.sub(r"\{\{([^{}\n]+)\}\}", r"`\1`", text)
    text = re.sub(r"(?<![\w_*])_(?=[^\s_])([^_\n]+?)(?<=\S)_(?![\w_])", r"*\1*", text)
    lines, original = text.split("\n"), text.split("\n")
    for i, line in enumerate(original):
        mark = re.match(r"(#+) +\S", line)  # '#\tcol': a sheet's number column
        near = [original[j] for j in (i - 1, i + 1) if 0 <= j < len(original)]
        if mark and (any(n.startswith(mark[1] + " ") for n in near) or not HEADING.match(line)):
            lines[i] = "- " + line[len(mark[1]):].lstrip()
    return "\n".join(lines)


def _pairs(pairs: list[list]) -> dict:
    """Label/value pairs as one record (a label given twice holds a list)."""
    record: dict = {}
    for key, value in pairs:
        key = key.strip() if isinstance(key, str) else str(key)
        if key in record:
            record[key] = [*(record[key] if isinstance(record[key], list) else [record[key]]), value]
        elif key:
            record[key] = value
    return record


_BOX = str.maketrans({**dict.fromkeys("│┃║╎╏┆┇┊┋", "|"), **dict.fromkeys("─━═╌╍┄┅┈┉", "-"),
                     **{chr(c): "+" for c in range(0x250C, 0x254C)}, **{chr(c): "+" for c in range(0x2552, 0x256D)}})


def _ascii(text: str) -> str:
    """A table drawn with '+----+' borders or box-drawing characters ('┌──┬──┐', '│') as a Markdown one (the
    border under its first row its rule)."""
    lines, out, seen = text.translate(_BOX).split("\n"), [], 0
    for i, line in enumerate(lines):
        border = re.fullmatch(r"\s*\+(?:[-=]+\+)+\s*", line)
        row = re.fullmatch(r"\s*\|.*\|\s*", line)
        if border:
            columns = line.count("+") - 1
            prev_row = i > 0 and re.fullmatch(r"\s*\|.*\|\s*", lines[i - 1])
            if prev_row and seen == 1:
                out.append("|" + "---|" * columns)
            continue
        seen = seen + 1 if row else 0
        out.append(line)
    return "\n".join(out)


_INSERT = re.compile(r"(?is)\binsert\s+into\s+[\w.\"`]+\s*\(([^()]*)\)\s*values\s*")
# a literal ('text', '' inside; $$text$$ or $tag$text$tag$ in PostgreSQL; a number; NULL), ARRAY[ or ], a cast
_SQL_VALUE = re.compile(r"\s*(?:[EN]?'(?P<q>(?:[^']|'')*)'|(?P<tag>\$\w*\$)(?P<d>.*?)(?P=tag)|(?P<open>ARRAY\s*\[)|"
                        r"(?P<close>\])|(?P<w>[-\w.]+))(?:\s*:\s*:\s*[\w\[\] ]+?)?\s*(?P<end>,|\)|(?=\]))?",
                        re.I | re.S)


def _sql_row(text: str, at: int) -> tuple[list[Any], int]:
    """The values of one row of VALUES from its '(' on (an ARRAY[...] a list), and where the row ends."""
    values: list[Any] = []
    stack = [values]
    while (v := _SQL_VALUE.match(text, at)) is not None:
        at = v.end()
        if v["open"]:
            stack.append([])
            continue
        if v["close"]:
            item: Any = stack.pop() if len(stack) > 1 else []
        else:
            item = v["q"].replace("''", "'") if v["q"] is not None else v["d"] if v["tag"] else \
                "" if v["w"].lower() == "null" else v["w"]
        stack[-1].append(item)
        if v["end"] == ")" and len(stack) == 1:
            break
    return values, at


def sql_records(text: str) -> list[tuple[int, int, Any]]:
    """SQL INSERT statements, each row of VALUES a record under the statement's column names."""
    out = []
    for m in _INSERT.finditer(text):
        columns = [c.strip(" \"`\n") for c in m[1].split(",")]
        rows, at = [], m.end()
        while at < len(text) and text[at] == "(":
            values, at = _sql_row(text, at + 1)
            rows.append({c: x for c, x in zip(columns, values, strict=False) if x})
            sep = re.match(r"\s*,\s*(?=\()", text[at:])
            at += sep.end() if sep else 0
        if rows:
            out.append((m.start(), at, rows))
    return out


# a pictograph or symbol decorating a line's start ('☑ Expected', '🔴 Alert', '▸ Details', '⚠️ Cause')
_ICONS = r"[\u2300-\u23ff\u25a0-\u27bf\u2b00-\u2bff\U0001F000-\U0001FAFF][\ufe0f\u200d]*"
_ICON = re.compile(rf"(?m)^([ \t]*)(?:{_ICONS}[ \t]*)+(?=\S)")
_GAP = re.compile(r"\s{2,}")
_COLUMN_NAME = re.compile(r"[^\W\d][\w .#/'-]{0,30}")


def _fixed_width(text: str) -> str:
    """Columns aligned with spaces (two or more apart): a run of lines each a short label and its value ('expected
    Milo', a pandas Series) as labelled lines; a header of column names over rows of as many cells (after a row
    number: a pandas DataFrame) as a Markdown table."""
    lines, out, i = text.split("\n"), [], 0
    cells = [_GAP.split(line.strip()) if "|" not in line else [] for line in lines]
    while i < len(lines):
        j = i
        while j < len(lines) and len(cells[j]) == 2 and _COLUMN_NAME.fullmatch(cells[j][0]) and \
                len(cells[j][0].split()) <= 3:
            j += 1
        if j - i >= 2:  # labels and their values
            out += [f"{lines[k][:len(lines[k]) - len(lines[k].lstrip())]}{a}: {b}" for k in range(i, j)
                    for a, b in [cells[k]]]
            i = j
            continue
        header, rows, j = cells[i], [], i
        while len(header) >= 2 and all(_COLUMN_NAME.fullmatch(h) for h in header) and j + 1 < len(lines) and \
                len(cells[j + 1]) in (len(header), len(header) + 1):
            rows.append(cells[j + 1][-len(header):])
            j += 1
        if rows:  # a header of column names over its rows
            out += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
            out += ["| " + " | ".join(r) + " |" for r in rows]
            i = j + 1
            continue
        out.append(lines[i])
        i += 1
    return "\n".join(out)


def tool_markup(text: str) -> str:
    """A text with its tools' markup as plain labelled lines: ASCII borders, wiki markup, the writers' chat handles,
    brace blocks, log levels and event times."""
    text = _ascii(text) if re.search(r"\+[-=]|[\u2500-\u257f]", text) else text
    text = _HANDLE.sub("", _wiki(text))  # '[10:02] maya: ...': a line of the writers' own chat is prose
    # protobuf text and other brace blocks: 'turn {' heads the lines indented under it, '}' closes it
    if first := _BLOCK.search(text):  # a bare name before '{' (no JSON key); an outermost block that opens the
        # text (no field of its own before it) is the record itself, one among fields a field of the record
        wrapped = not re.search(r"(?m)^[A-Za-z_][\w.]*[ \t]*:[ \t]*\S", text[:first.start()])
        text = _BLOCK.sub(lambda m: f"{m[1]}{m[2]}:\n" if m[1] or not wrapped else "", text)
        text = re.sub(r"(?m)^[ \t]*\}[ \t]*,?[ \t]*$\n?", "", text)
    text = _fixed_width("\n".join(_log_line(line) for line in _ICON.sub(r"\1", text).split("\n")))
    return _CLOCK.sub("", text)  # 'T+07m  mem0.extract runs ...', '10:02:11 ...': an event's time is no part of it


def prose_marks(text: str) -> str:
    """Marks of formal or terse prose as quotes and labels: ‘X’, 'key ..... value', '(i) X; (ii) Y', run-in
    headings."""
    # '[dictated] ...', a line '[Memo 3 — 01:12 — transcript]': an editor's tag
    text = re.sub(r"(?m)^\[(?:[a-z][^\]\n]{0,40}\]\s*|[^\]\n]{1,60}\][ \t]*$)", "", text)
    text = re.sub(r"(?i)(?<=[\s,])(?:um+|uh+|uhm|erm|hmm+)\b,?\s*", "", text)  # a spoken filler
    text = re.sub(r"(?i),?[ \t]+(?:so yeah|you know|okay|ok)[ \t]*$|(?<=\s)(?:so yeah|you know)\b,?\s*", "", text,
                  flags=re.M)
    text = re.sub(r"(?m)^(?:(?:Right|Okay|OK|So|Well|Alright|Anyway),|(?:okay|ok|so|and|like|yeah)\b)\s+",
                  "", text)  # 'Right, the question ...', 'okay so this is case 1'
    text = re.sub(r"(?m)^\(?\d{1,2}/\d{1,2}\)?[ \t]+", "", text)  # '3/6 ...': a post's place in a thread
    text = re.sub(r"[ \t]*(?:[👇⬇↓]\ufe0f?)+[ \t]*$", ":", text, flags=re.M)  # 'what it wrote 👇': what follows
    text = re.sub(rf"(?m)[ \t]+(?:{_ICONS}[ \t]*)+$", "", text)  # a closing icon ('a fun one 🧵')
    # 'the line, from Zane:' over a line quoting it: one line ('from Zane: “...”')
    text = re.sub(r"(?m)^([ \t]*\S+(?:[ \t]+\S+){2,}:)[ \t]*\n[ \t]*(?=[“\"][^\n]*[”\"][ \t]*$)", r"\1 ", text)
    # 'what it read was item 1 A then item 2 B': items read out
    text = re.sub(r"(?i)(?:\s+(?:then|and))?\s+(?:item|number)\s+(?:\d+|one|two|three)\s+(?=[A-Z\[“\"])",
                  lambda m: " " if re.fullmatch(r"(?i)\s+\w+\s+(?:1|one)\s+", m[0]) else " and ", text)
    # 'the line is from Zane, I read it word for word I went ...': a quote read out
    text = re.sub(r"(?i)\b(?:word for word|verbatim)[,:]?\s+([^“\"\n]+?[.!?])(?=\s|$)", r"word for word: “\1”", text)
    text = _SPOKEN_QUOTE.sub(r"“\1”", text)  # 'quote, I adopted a rabbit unquote': a quote read aloud
    text = re.sub(r"(?m)[ \t]{2,}\d+(?:\.\d+)?[ \t]*/[ \t]*\d+[ \t]*$", "", text)  # 'Item 2      0 / 1': a mark
    # a title in lenticular brackets ('【Cause】...') labels its line
    text = re.sub(r"(?m)^([ \t]*)[【〖〔［]([^】〗〕］\n]{1,40})[】〗〕］][ \t]*", r"\1\2: ", text)
    text = re.sub(r"(?<=[^\s:])\s*[\u2460-\u2473\u2776-\u2793]\s*", " | ", text)  # '①A ②B': a list
    text = re.sub(r"[\u2460-\u2473\u2776-\u2793]\s*", "", text)
    text = _SINGLE.sub(r"“\1”", text)  # ‘X’ (a ’ inside a word is an apostrophe: ‘Xavi’s rabbit’)
    text = re.sub(r"<([A-Z][^<>=\n]*\s[^<>=\n]*)>", r"“\1”", text)  # '<Zane went to Rome>': a sentence in angles
    text = re.sub(r"(?m)^([ \t]*[^\W\d][\w /;&()-]{0,40}?)[ \t]*\.{3,}[ \t]*", r"\1: ", text)  # 'stage ..... x'
    text = re.sub(r"(?<=[:;,] )\((?:[ivx]{1,4}|[a-h]|\d{1,2})\)\s+", "", text)  # '(i) “X”; (ii) “Y”', '(a) X; (b) Y'
    return _RUN_IN.sub(_run_in, text)  # 'Criteria. The correct response ...': a heading run into its paragraph


def vertical_record(header: list[str], rows: list[dict]) -> dict | None:
    """A two-column table of labels and values as one record ('| expected | Milo |'): three rows or more, its first
    column short labels, none a question; else None."""
    keys = [r.get(header[0], "") for r in rows] if len(header) == 2 else []
    if len(rows) < 3 or not keys or not all(isinstance(k, str) and 0 < len(k.split()) <= 3 and "?" not in k
                                            for k in keys):
        return None
    return _pairs(([header] if len(header[1].split()) > 1 else []) +
                  [[r.get(header[0], ""), r.get(header[1], "")] for r in rows])
