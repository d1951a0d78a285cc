"""The report's charts as plain inline SVG: no script, no library, no network.

Each function takes the report's data and returns one ``<svg>`` element whose figures are also in its text
(and in ``data-n`` attributes), so the page reads without colour and tests read the numbers back.
"""

from __future__ import annotations

from html import escape
from typing import Any

from memopt.taxonomy import ERROR_TYPES

__all__ = ["TYPE_COLORS", "matrix_svg", "rounds_svg", "funnel_svg", "groups_svg"]

TYPE_COLORS = {"ExtractionError": "#c0504d", "UpdateError": "#e6842a", "DeletionError": "#8064a2",
               "RetrievalError": "#4f81bd", "ResponseError": "#2ca25f"}
_FONT = 'font-family="system-ui, sans-serif" font-size="12"'


def _svg(width: float, height: float, body: list[str], label: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{escape(label)}" width="{width:.0f}" '
            f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" {_FONT}>' + "".join(body) + "</svg>")


def _text(x: float, y: float, text: Any, anchor: str = "start", extra: str = "") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" {extra}>{escape(str(text))}</text>'


def matrix_svg(matrix: dict[str, dict[str, int]]) -> str:
    """Failures by operation (rows) × error type (columns), a cell's shade by its count."""
    types = [t for t in ERROR_TYPES if any(t in row for row in matrix.values())]
    ops = list(matrix)
    top = max((n for row in matrix.values() for n in row.values()), default=1)
    left, cell, head = 130, 112, 40
    body = [_text(left + i * cell + cell / 2, 26, t.removesuffix("Error"), "middle", 'font-weight="600"')
            for i, t in enumerate(types)]
    for r, op in enumerate(ops):
        y = head + r * 34
        body.append(_text(left - 8, y + 21, op, "end"))
        for i, t in enumerate(types):
            n = matrix[op].get(t, 0)
            shade = 0.12 + 0.88 * n / top if n else 0.0
            body.append(f'<rect x="{left + i * cell + 2}" y="{y + 2}" width="{cell - 4}" height="30" rx="3" '
                        f'fill="{TYPE_COLORS[t]}" fill-opacity="{shade:.2f}" stroke="#d0d7de" data-op="{escape(op)}" '
                        f'data-type="{t}" data-n="{n}"><title>{escape(op)} · {t}: {n}</title></rect>')
            if n:
                body.append(_text(left + i * cell + cell / 2, y + 22, n, "middle",
                                  'font-weight="600" fill="#111"'))
    return _svg(left + len(types) * cell + 10, head + len(ops) * 34 + 8, body, "failures by operation and error type")


def _legend(types: list[str], y: float) -> list[str]:
    out, x = [], 10.0
    for t in types:
        out += [f'<rect x="{x:.0f}" y="{y - 10:.0f}" width="12" height="12" fill="{TYPE_COLORS[t]}"/>',
                _text(x + 16, y, t)]
        x += 24 + 7.2 * len(t)
    return out


def rounds_svg(rounds: list[dict[str, Any]]) -> str:
    """Failures by error type per round (stacked bars), for an optimize run."""
    types = [t for t in ERROR_TYPES if any(r["failures"].get(t) for r in rounds)]
    top = max((sum(r["failures"].values()) for r in rounds), default=1) or 1
    left, width = 90, 520
    body = _legend(types, 16)
    for i, r in enumerate(rounds):
        y, x = 30 + i * 28, float(left)
        total = sum(r["failures"].values())
        body.append(_text(left - 8, y + 16, f"round {r['round']}", "end"))
        for t in types:
            n = r["failures"].get(t, 0)
            w = width * n / top
            if n:
                body.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="20" fill="{TYPE_COLORS[t]}" '
                            f'data-round="{r["round"]}" data-type="{t}" data-n="{n}"><title>round {r["round"]} · {t}: '
                            f'{n}</title></rect>')
            x += w
        body.append(_text(x + 6, y + 15, total))
    return _svg(left + width + 60, 40 + len(rounds) * 28, body, "failures by error type per round")


def funnel_svg(evidence: dict[str, Any]) -> str:
    """How far the gold evidence of the failed cases got: into memory, the store at question time, the context."""
    n = evidence["funnel_cases"]
    reached = evidence["reached"]
    rows = [("answerable failed cases with gold evidence", n), ("its information entered memory", reached["memory"]),
            ("the store held it at question time", reached["question_time"]),
            ("it reached the answer's context", reached["context"])]
    left, width = 290, 360
    body = []
    for i, (label, k) in enumerate(rows):
        y = 8 + i * 28
        w = width * k / n if n else 0
        share = f" ({k / n:.0%})" if n and i else ""
        body += [_text(left - 8, y + 15, label, "end"),
                 f'<rect x="{left}" y="{y}" width="{width}" height="20" fill="#eef1f4"/>',
                 f'<rect x="{left}" y="{y}" width="{w:.1f}" height="20" fill="#1b9e9e" data-n="{k}"/>',
                 _text(left + width + 6, y + 15, f"{k}{share}")]
    return _svg(left + width + 90, 8 + len(rows) * 28, body, "evidence recall along the pipeline")


def groups_svg(groups: list[dict[str, Any]]) -> str:
    """One bar per mechanism group, coloured by its error type."""
    top = max((g["n"] for g in groups), default=1)
    left, width = 40, 420
    body = []
    for i, g in enumerate(groups):
        y = 6 + i * 26
        w = width * g["n"] / top
        color = TYPE_COLORS.get(g["error_type"], "#888")
        body += [_text(left - 8, y + 15, f"#{i + 1}", "end"),
                 f'<rect x="{left}" y="{y}" width="{w:.1f}" height="18" fill="{color}"'
                 f' data-n="{g["n"]}"><title>{escape(g["title"])}: {g["n"]}</title></rect>',
                 _text(left + w + 6, y + 14, f"{g['n']} · {g['title']}")]
    return _svg(left + width + 520, 8 + len(groups) * 26, body, "mechanism groups by size")
