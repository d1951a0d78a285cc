"""`memopt directives`: print SimLM's directive catalogue (Markdown)."""

from __future__ import annotations

import typer

__all__ = ["directives"]


def directives() -> None:
    """Print SimLM's directive catalogue: what each instruction directive changes, and its triggers."""
    from memopt.lm.directives import catalogue_table

    typer.echo(catalogue_table())
