"""The files of a report: ``report.html``, ``report.md``, ``report.json`` and ``cases/<case id>.html``.

`report_files` gives them as (relative name → text), for a directory (`write_report`) or MLflow artifacts alike.
Every representative case gets its graph view — the viewer `memopt show --case` writes
(`memopt.trace.render.render_html`), the case's subgraph with its evidence path and blamed op marked — so
every case link of the page opens; `render_report` renders a report read back from ``report.json``, graph views
included when they are there.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memopt.core.errors import DataError
from memopt.core.files import inside, read_json, write_atomic
from memopt.report.build import SCHEMA, case_link
from memopt.report.page import report_html, report_markdown
from memopt.report.sources import Diagnosis

__all__ = ["REPORT_FILES", "report_files", "case_views", "write_report", "read_report"]

REPORT_FILES = ("report.html", "report.md", "report.json")


def case_views(report: dict[str, Any], diagnosis: Diagnosis) -> dict[str, str]:
    """The graph view of every representative case (link → HTML)."""
    from memopt.trace.render import render_html

    by_id = {c.case_id: c for c in diagnosis.cases}
    views = {}
    for group in report["groups"]:
        for entry in group["representatives"]:
            case = by_id[entry["case_id"]]
            G, a = diagnosis.graph_of(case), case.attribution
            path = [n for n in a.evidence_path if n in G]
            blamed = a.op_id if a.op_id in G and G.nodes[a.op_id].get("type") == "op" else None
            views[case_link(a.case_id)] = render_html(
                G, case=case.key, highlight=path, blamed=blamed,
                title=f"{a.case_id}: {a.error_type} at {a.operation} — {group['title']}")
    return views


def report_files(report: dict[str, Any], diagnosis: Diagnosis | None = None,
                 views: dict[str, str] | None = None) -> dict[str, str]:
    """Every file of a report, by name relative to its folder (graph views from ``diagnosis``, or ``views``)."""
    files = {"report.html": report_html(report), "report.md": report_markdown(report),
             "report.json": json.dumps(report, ensure_ascii=False, indent=1, default=str) + "\n"}
    files.update(case_views(report, diagnosis) if diagnosis is not None else views or {})
    return files


def write_report(files: dict[str, str], out: str | Path) -> Path:
    """Write a report's files into the folder ``out`` (each atomically, inside it); the page's path."""
    out = Path(out)
    for name, text in files.items():
        write_atomic(inside(out, name), text)
    return out / "report.html"


def read_report(folder: str | Path) -> tuple[dict[str, Any], dict[str, str]]:
    """A report folder read back: the data of ``report.json`` and its graph views (link → HTML)."""
    folder = Path(folder)
    report = read_json(folder / "report.json", missing="no report.json: not a folder `memopt report` wrote.")
    if not isinstance(report, dict) or report.get("schema") != SCHEMA:
        raise DataError(f"{folder / 'report.json'}: not a memopt report (schema {SCHEMA!r}).")
    views = {p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
             for p in sorted((folder / "cases").glob("*.html"))}
    return report, views
