"""`memopt show`: write an evolution graph as an offline HTML viewer (and a PNG preview)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import typer

from memopt.cli import options

__all__ = ["show"]


def show(
    graph: Path = typer.Argument(None, help="Evolution graph JSON: memopt's (memopt run --trace) or a smartcomment / "
                                            "MemTraceBench graph; omit it with --trace-id."),
    case: str = typer.Option(None, "--case", help="Only one question's subgraph: key (q12) or case id (conv-30:q12)."),
    path: str = typer.Option(None, "--path", help="Evidence path to emphasise: node ids, comma-separated, in order."),
    blamed: str = typer.Option(None, "--blamed", help="Operation id to mark as the blamed op."),
    trace_id: str = typer.Option(None, "--trace-id", help="An MLflow trace of an optimize round (tr-...): show its "
                                                          "case's graph, evidence path and blamed op."),
    tracking_uri: str = typer.Option(None, "--tracking-uri", help="Store of --trace-id (default: "
                                                                  "$MLFLOW_TRACKING_URI, else sqlite:///mlflow.db)."),
    out: Path = typer.Option(..., "--out", "-o", help="Where to write the HTML viewer."),
    png: Path = typer.Option(None, "--png", help="Also write a static PNG preview here."),
) -> None:
    """Write an evolution graph as one self-contained HTML page (pan, zoom, click a node for its details)."""
    from memopt.core.errors import ConfigError
    from memopt.core.files import check_writable, write_atomic
    from memopt.trace.memtracebench import open_graph
    from memopt.trace.render import graph_view, render_png, view_html

    if (graph is None) == (trace_id is None):
        raise ConfigError("memopt show: give either a GRAPH.json or --trace-id TRACE_ID (not both).")
    check_writable(out, reads=[graph])
    if png is not None:
        check_writable(png, option="--png", reads=[graph, out])
    highlight = options.parse_ids(path, "--path")
    source = str(graph)
    if trace_id is not None:
        from memopt.tracking.traces import case_graph_of_trace

        with tempfile.TemporaryDirectory(prefix="memopt-show-") as tmp:
            found = case_graph_of_trace(trace_id, tracking_uri, tmp)
            G = open_graph(found.path)
        case, highlight, blamed = case or found.case, highlight or found.highlight, blamed or found.blamed
        source = f"trace {trace_id} (run {found.run_id})"
    else:
        G = open_graph(graph)
    try:
        view = graph_view(G, case=case, highlight=highlight, blamed=blamed)
    except ConfigError as e:
        raise ConfigError(f"{source}: {e}") from None
    write_atomic(out, view_html(view))
    meta = view["meta"]
    drawn = f" as {len(view['nodes']):,} groups" if meta["mode"] == "summary" else ""
    typer.echo(f"wrote {out}: {meta['mode']} view, {meta['shown']:,} of {meta['total']:,} nodes{drawn}")
    if png is not None:
        typer.echo(f"wrote {render_png(G, png, case=case, highlight=highlight, blamed=blamed)}")
