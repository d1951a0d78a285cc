"""`memopt directives`: print SimLM's directive catalogue (Markdown)."""

from __future__ import annotations

import typer

__all__ = ["directives"]


def directives() -> None:
    """Print SimLM's directive catalogue: the concepts each directive reads, sentences that do and do not turn it
    on, the failure without it and the behaviour with it, then the concept lexicon."""
    from memopt.lm.directives import catalogue_table

    typer.echo(catalogue_table())
