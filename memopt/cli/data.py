"""`memopt data ...`: make and inspect data sets."""

from __future__ import annotations

from pathlib import Path

import typer

app = typer.Typer(help="Make and inspect data sets (LoCoMo format).", no_args_is_help=True)


@app.command("synth")
def synth(
    conversations: int = typer.Option(6, "--conversations", "-n", min=1, help="Number of conversations."),
    sessions: int = typer.Option(8, "--sessions", "-s", min=1, help="Sessions per conversation."),
    seed: int = typer.Option(0, "--seed", help="Random seed; the same seed gives byte-identical output."),
    hard_percent: int = typer.Option(20, "--hard-percent", min=0, max=90,
                                     help="Share of questions (%) whose failure no directive fixes: distractors, "
                                          "pronoun-only references, implied facts, hurried typing; 0 for none."),
    out: Path = typer.Option(..., "--out", "-o", help="Where to write the LoCoMo-format JSON."),
) -> None:
    """Generate synthetic LoCoMo-format conversations with evidence-linked questions."""
    from memopt.data.synth import SynthSpec, write_synthetic

    spec = SynthSpec(conversations=conversations, sessions=sessions, seed=seed, hard_percent=hard_percent)
    stats = write_synthetic(spec, out)
    typer.echo(f"wrote {out}: {stats['conversations']} conversations, {stats['sessions']} sessions, "
               f"{stats['turns']} turns, {stats['questions']} questions {stats['by_category']}; "
               f"{sum(stats['hard'].values())} that no directive fixes {stats['hard']}")
