"""`memopt label DIR`: a local web page to review attributed failures one by one and label them."""

from __future__ import annotations

from pathlib import Path

import typer

__all__ = ["label"]


def label(
    directory: Path = typer.Argument(..., file_okay=False, help="A trace directory (or a MemTraceBench one) with its "
                                                                "graphs and attributions.jsonl."),
    attributions: Path = typer.Option(None, "--attributions", "-a", dir_okay=False,
                                      help="The attributions to review (default: DIR/attributions.jsonl)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to listen on (default: this machine only)."),
    port: int = typer.Option(8765, "--port", min=0, max=65535, help="Port (0: a free one)."),
) -> None:
    """Serve the labelling page: accept, correct or flag each failure; labels go to DIR/labels.jsonl at once."""
    from memopt.core.errors import ConfigError
    from memopt.label.app import free_port, serve
    from memopt.label.review import ReviewSet

    if not directory.is_dir():
        raise ConfigError(f"{directory}: no such directory; pass the trace directory of `memopt run --trace` or "
                          "`memopt attach`, with its attributions.jsonl (`memopt attribute --out`).")
    review = ReviewSet.open(directory, attributions=attributions)
    port = free_port(host, port)
    progress = review.progress()
    where = f"http://{host}:{port}/"
    typer.echo(f"labelling {progress['total']} attributed failures of {directory} ({progress['reviewed']} reviewed); "
               f"labels → {review.labels.path}")
    for error in review.errors():
        typer.echo(f"damaged: {error}", err=True)
    if host not in ("127.0.0.1", "localhost"):
        typer.echo(f"warning: listening on {host}: anyone who reaches it can read these cases and label them.",
                   err=True)
    typer.echo(f"open {where} (Ctrl-C stops)", err=False)
    serve(review, host=host, port=port)
