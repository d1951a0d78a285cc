"""`memopt directives`: print SimLM's directive catalogue (tables on a terminal, Markdown with ``--markdown``)."""

from __future__ import annotations

import typer

__all__ = ["directives"]


def directives(
    markdown: bool = typer.Option(False, "--markdown", help="Print the catalogue as Markdown tables (for docs)."),
) -> None:
    """Print SimLM's directive catalogue: the concepts each directive reads, sentences that do and do not turn it
    on, the failure without it and the behaviour with it, then the concept lexicon."""
    from memopt.simlm import catalogue_table

    text = catalogue_table()
    if markdown:
        typer.echo(text)
        return
    from rich.console import Console

    from memopt.cli.tables import markdown_tables

    console = Console()
    for table in markdown_tables(text):
        console.print(table)
