"""`memopt show`: write an evolution graph as an offline HTML viewer (and a PNG preview)."""

from __future__ import annotations

from pathlib import Path

import typer

from memopt.cli import options

__all__ = ["show"]


def show(
    graph: Path = typer.Argument(..., help="Evolution graph JSON: memopt's (memopt run --trace) or a smartcomment / "
                                           "MemTraceBench graph."),
    case: str = typer.Option(None, "--case", help="Only one question's subgraph: key (q12) or case id (conv-30:q12)."),
    path: str = typer.Option(None, "--path", help="Evidence path to emphasise: node ids, comma-separated, in order."),
    blamed: str = typer.Option(None, "--blamed", help="Operation id to mark as the blamed op."),
    out: Path = typer.Option(..., "--out", "-o", help="Where to write the HTML viewer."),
    png: Path = typer.Option(None, "--png", help="Also write a static PNG preview here."),
) -> None:
    """Write an evolution graph as one self-contained HTML page (pan, zoom, click a node for its details)."""
    from memopt.errors import ConfigError
    from memopt.files import check_writable, write_atomic
    from memopt.trace.memtrace import open_graph
    from memopt.trace.render import graph_view, render_png, view_html

    check_writable(out)
    if png is not None:
        check_writable(png, option="--png")
    G = open_graph(graph)
    highlight = options.parse_ids(path)
    try:
        view = graph_view(G, case=case, highlight=highlight, blamed=blamed)
    except ConfigError as e:
        raise ConfigError(f"{graph}: {e}") from None
    write_atomic(out, view_html(view))
    meta = view["meta"]
    drawn = f" as {len(view['nodes']):,} groups" if meta["mode"] == "summary" else ""
    typer.echo(f"wrote {out}: {meta['mode']} view, {meta['shown']:,} of {meta['total']:,} nodes{drawn}")
    if png is not None:
        typer.echo(f"wrote {render_png(G, png, case=case, highlight=highlight, blamed=blamed)}")
