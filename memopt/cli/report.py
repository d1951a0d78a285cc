"""`memopt report`: the diagnostic report of attributed failures, as one offline HTML page and Markdown."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import typer

__all__ = ["report"]


def report(
    source: str = typer.Argument(..., help="A trace directory (`memopt run --trace`, `memopt attach`), a MemTraceBench "
                                           "directory (DIR/<split>/*.json), or the run id of a `memopt optimize`."),
    out: Path = typer.Option(Path("report"), "--out", "-o", file_okay=False,
                             help="Folder to write report.html, report.md, report.json and cases/*.html into."),
    attributions: Path = typer.Option(None, "--attributions", "-a", dir_okay=False,
                                      help="The attributions (`memopt attribute --out`; default: "
                                           "SOURCE/attributions.jsonl)."),
    labels: Path = typer.Option(None, "--labels", dir_okay=False,
                                help="A team's labels (`memopt label`): flagged cases leave the report (default: "
                                     "SOURCE/labels.jsonl, when there is one)."),
    round_name: str = typer.Option("0", "--round", help="Of an optimize run: '0' (the starting prompts) or 'final'."),
    tracking_uri: str = typer.Option(None, "--tracking-uri", help="Store of an optimize run (default: "
                                                                  "$MLFLOW_TRACKING_URI, else sqlite:///mlflow.db)."),
    lm: str = typer.Option(None, "--lm", envvar="MEMOPT_REPORT_LM",
                           help="A real LM that writes a paragraph per mechanism and a summary (default: none, the "
                                "deterministic grouping alone)."),
    system_prior: Path = typer.Option(None, "--system-prior", dir_okay=False,
                                      help="A system prior file whose 'overview' describes the system to the writer "
                                           "LM and the page."),
    title: str = typer.Option(None, "--title", help="The page's title."),
) -> None:
    """Group attributed failures into recurring mechanisms; write what to change first, with case links to graphs."""
    from memopt.attribution.labels import labels_beside, load_labels
    from memopt.core.errors import ConfigError
    from memopt.core.files import check_writable
    from memopt.report import build_report, load_diagnosis, read_report, report_files, write_report
    from memopt.report.build import read_overview
    from memopt.report.writer import GroupWriter

    check_writable(out, option="--out", directory=True)
    overview = read_overview(system_prior) if system_prior is not None else None
    writer = GroupWriter(lm) if lm else None
    path = Path(source)
    if path.exists():
        labelled = load_labels(labels) if labels is not None else load_labels(labels_beside(path), missing_ok=True)
        diagnosis = load_diagnosis(path, attributions=attributions, flagged=labelled.flagged)
        data = build_report(diagnosis, title=title, overview=overview, writer=writer)
        files = report_files(data, diagnosis)
    else:
        if not re.fullmatch(r"[0-9a-f]{32}", source):
            raise ConfigError(f"{source}: no such directory, nor the run id of a `memopt optimize` (32 hex digits); "
                              "pass a trace directory, a MemTraceBench directory or a run id.")
        if attributions is not None or labels is not None:
            raise ConfigError(f"{source}: no such directory; --attributions and --labels go with a directory (an "
                              "optimize run's report was built from its own attributions).")
        from memopt.tracking.reports import fetch_report

        with tempfile.TemporaryDirectory(prefix="memopt-report-") as tmp:
            name = "round-0" if round_name in ("0", "round-0") else round_name
            data, views = read_report(fetch_report(source, name, tmp, tracking_uri))
        if overview:
            data["overview"] = overview
        if title:
            data["title"] = title
        if writer is not None:
            writer.write(data)
            data["writer"] = writer.spec
            data["cost"] |= {"writer_lm_calls": writer.calls, "writer_seconds": round(writer.seconds, 3)}
        files = report_files(data, views=views)
    page = write_report(files, out)
    groups = data["groups"]
    typer.echo(f"wrote {page} (and report.md, {sum(k.startswith('cases/') for k in files)} case views): "
               f"{data['n']} failed cases in {len(groups)} mechanism(s)")
    for i, group in enumerate(groups[:5], start=1):
        typer.echo(f"  #{i} {group['n']:>4}  {group['title']} → {group['advice']}")
    if data.get("writer_error"):
        typer.echo(f"the writer LM stopped: {data['writer_error']}", err=True)
