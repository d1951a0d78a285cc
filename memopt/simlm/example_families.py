"""More families of layout, brought to the lines `memopt.simlm.example_layouts` reads (used only by the reader).

Each piece says what a layout *is*, never a tool's labels: a LaTeX tabular ('&' between cells, '\\\\' ending a row),
a Mermaid sequence diagram (participants and their messages), an IRC log's '[hh:mm] <nick>', a Jira table's
'||header||' row, an emphasised label before its colon ('*Xavi*: ...'); and for the reader of examples: the paragraph
each example opens with (`opening_shape`) and two terse parallel parts ('want X / have Y', `parallel`).
"""

from __future__ import annotations

import re

from memopt.simlm.example_parts import QUESTION, role_of

__all__ = ["families", "opening_shape", "parallel"]

# --- LaTeX tabulars -------------------------------------------------------------------------------------------------

_BEGIN = re.compile(r"\\begin\{(tabular\*?|tabularx|tabulary|longtable|array)\}")
_RULE = re.compile(r"\\(?:toprule|midrule|bottomrule|hline|cline\{[^}]*\}|cmidrule(?:\([^)]*\))?\{[^}]*\})")
_COMMAND = re.compile(r"\\(?:multicolumn\{[^{}]*\}\{[^{}]*\}|multirow\{[^{}]*\}\{[^{}]*\}|[a-zA-Z]+)\{([^{}]*)\}")
_ESCAPED = {"\\&": "&", "\\%": "%", "\\_": "_", "\\#": "#", "\\$": "$", "~": " ", "``": "“", "''": "”"}


def _groups_end(text: str, at: int, count: int) -> int:
    """Where ``count`` brace groups starting at ``at`` end (a column spec may nest braces: '{@{}lp{10cm}@{}}')."""
    for _ in range(count):
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text) or text[at] != "{":
            return at
        depth = 0
        for i in range(at, len(text)):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                at = i + 1
                break
    return at


def _tex_cell(cell: str) -> str:
    """A cell's text: commands keep their last argument ('\\textbf{x}', '\\multicolumn{2}{l}{x}'), escapes their
    character, a '\\newline' separates items."""
    cell = re.sub(r"\\newline\b|\\par\b", " <br> ", cell)
    while (new := _COMMAND.sub(r"\1", cell)) != cell:
        cell = new
    for escaped, char in _ESCAPED.items():
        cell = cell.replace(escaped, char)
    return " ".join(re.sub(r"\\[a-zA-Z]+\b\s*|[{}]", "", cell).split())


def _tabular(body: str) -> str:
    """A tabular's rows: two cells a label and its value ('label: value', items under it), more cells a Markdown table
    under its first row; a row of one cell (a title) a line of its own."""
    rows, header_ruled = [], False
    for raw in re.split(r"\\\\(?:\[[^\]]*\])?", body):
        ruled = bool(_RULE.search(raw))
        cells = [_tex_cell(c) for c in re.split(r"(?<!\\)&", _RULE.sub("", raw))]
        if ruled and len(rows) == 1:
            header_ruled = True
        if any(cells):
            rows.append(cells)
    wide = [r for r in rows if len(r) > 2]
    out = []
    for cells in rows:
        if len(cells) == 1:
            out.append(cells[0])
        elif not wide:
            items = [i.strip() for i in cells[1].split("<br>") if i.strip()]
            out += [f"{cells[0]}: {items[0]}"] if len(items) == 1 else [f"{cells[0]}:", *(f"  {i}" for i in items)]
        else:
            out.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
            if cells is wide[0] and (header_ruled or len(wide) > 1):
                out.append("|" + "---|" * len(cells))
    return "\n".join(out)


def _latex(text: str) -> str:
    out, at = [], 0
    for m in _BEGIN.finditer(text):
        if m.start() < at:
            continue
        end = re.compile(rf"\\end\{{{re.escape(m[1])}\}}").search(text, m.end())
        if not end:
            break
        start = _groups_end(text, m.end(), 2 if m[1] in ("tabular*", "tabularx", "tabulary") else 1)
        out += [text[at:m.start()], "\n", _tabular(text[start:end.start()]), "\n"]
        at = end.end()
    return "".join([*out, text[at:]])


# --- Mermaid sequence diagrams --------------------------------------------------------------------------------------

_PARTICIPANT = re.compile(r"^\s*(?:participant|actor)\s+(\S+)(?:\s+as\s+(.+?))?\s*$")
_MESSAGE = re.compile(r"^\s*([^\s:>-][^:>]*?)\s*(-{1,2}(?:>>|>|x|\)))\s*[+-]?\s*([^\s:][^:]*?)\s*:\s*(.*)$")
_NOTE = re.compile(r"^\s*note\s+(?:left of|right of|over)\s+[^:]+:\s*(.*)$", re.I)


def _sequence(block: str) -> str:
    """A sequence diagram as lines: a participant's message 'Name: text'; one to itself 'verb: what' (what it did);
    the reply to the participant that asked a question 'Name replied: text'; a note or a '%%' comment its text."""
    names: dict[str, str] = {}
    asked: set[tuple[str, str]] = set()
    out = []
    for line in block.split("\n"):
        if p := _PARTICIPANT.match(line):
            names[p[1]] = (p[2] or p[1]).strip()
        elif note := _NOTE.match(line):
            out.append(note[1])
        elif line.strip().startswith("%%"):
            out.append(line.strip()[2:].strip())
        elif m := _MESSAGE.match(line):
            sender, receiver, said = names.get(m[1], m[1]), names.get(m[3], m[3]), m[4].strip()
            if sender == receiver:
                verb = re.match(r"([a-z]+)\s+(\S.*)$", said)
                out.append(f"{verb[1]}: {verb[2]}" if verb else said)
            elif (receiver, sender) in asked:
                out.append(f"{sender} replied: {said}")
            else:
                asked |= {(sender, receiver)} if QUESTION.search(said) else set()
                out.append(f"{sender}: {said}")
        elif not re.match(r"\s*(?:autonumber|end|loop|alt|else|opt|par|rect)\b", line):
            out.append(line.strip())  # a blank line still ends a paragraph
    return "\n".join(out)


def _mermaid(text: str) -> str:
    return re.sub(r"(?ms)^[ \t]*sequenceDiagram[ \t]*\n(.*?)(?=^[ \t]*```|^[ \t]*sequenceDiagram|\Z)",
                  lambda m: _sequence(m[1]) + "\n", text)


# --- the rest -------------------------------------------------------------------------------------------------------


def families(text: str) -> str:
    """A text with LaTeX tabulars, Mermaid sequence diagrams, IRC lines and Jira table headers as labelled lines or
    Markdown tables; an emphasised label before its colon ('*Xavi*:') as a plain label."""
    text = _latex(text) if "\\begin{" in text else text
    text = _mermaid(text) if "sequenceDiagram" in text else text
    # '[09:14] <dana> ...': an IRC line's time and the handle of the person discussing the case
    text = re.sub(r"(?m)^[ \t]*[\[(]?\d{1,2}:\d{2}(?::\d{2})?[\])]?[ \t]+<[@+%~&]?[a-z][\w.-]*>[ \t]+", "", text)
    text = re.sub(r"(?m)^[ \t]*\|\|(.+?)\|\|[ \t]*$",  # '||Field||Value||': a Jira table's header row
                  lambda m: "| " + " | ".join(c.strip() for c in m[1].split("||")) + " |\n" +
                  "|---" * (m[1].count("||") + 1) + "|", text)
    text = re.sub(r"(?<![\w*])\*([^*\n]{1,40}?)\*(?=:(?:\s|$))", r"\1", text)  # not '*X* :emoji:'
    # 'Hi all,' or 'Cheers,' over a signature: a letter's greeting or sign-off, a paragraph of its own
    return re.sub(r"(?<=\n\n)[ \t]*[A-Z][^\s,]*(?:[ \t]+[^\s,]+){0,2},[ \t]*(?:\n[^\n]{1,40})?(?=\n\s*\n|\s*\Z)", "",
                  text)


def opening_shape(paragraph: str) -> str:
    """A paragraph's first line with its values masked (quotes, identifiers, numbers): two examples laid out alike
    open with the same shape ('mem0.extract · Changes requested', 'mem0.update · Changes requested')."""
    first = next((line.strip() for line in paragraph.split("\n") if line.strip()), "")
    first = re.sub(r"“[^”]*”|\"[^\"]*\"|(?<!\w)'[^']*'(?!\w)", "Q", first)
    return re.sub(r"\S*(?:\d|\w\.\w)\S*", "#", first)


def parallel(parts: list[str]) -> list[str]:
    """Two terse parallel parts, each a lower-case lead word and a value ('want X / have Y'): when one lead names the
    gold answer (or the system's) and the other names neither, the other part takes the other role."""
    led = [re.fullmatch(r"([a-z]+)\s+(\S.*)", p.strip()) for p in parts]
    if len(parts) != 2 or not all(led):
        return parts
    roles = [role_of(m[1]) for m in led]
    if None not in roles or roles == [None, None]:
        return parts
    other = "answered" if "gold" in roles else "expected"
    return [p if r else f"{other} {m[2]}" for p, r, m in zip(parts, roles, led, strict=True)]
