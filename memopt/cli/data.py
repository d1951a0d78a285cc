"""`memopt data ...`: make and inspect data sets."""

from __future__ import annotations

from pathlib import Path

import typer

app = typer.Typer(help="Make and inspect data sets (LoCoMo or LongMemEval format).", no_args_is_help=True)


@app.command("synth")
def synth(
    conversations: int = typer.Option(6, "--conversations", "-n", min=1, help="Number of conversations."),
    sessions: int = typer.Option(8, "--sessions", "-s", min=1, help="Sessions per conversation."),
    seed: int = typer.Option(0, "--seed", help="Random seed; the same seed gives byte-identical output."),
    hard_percent: int = typer.Option(20, "--hard-percent", min=0, max=90,
                                     help="Share of questions (%) whose failure no directive fixes: distractors, "
                                          "pronoun-only references, implied facts, hurried typing; 0 for none."),
    out: Path = typer.Option(..., "--out", "-o", help="Where to write the JSON."),
    fmt: str = typer.Option("locomo", "--format", "-f",
                               help="locomo (conversations with their questions) or longmemeval (one instance per "
                                    "question, its conversation as the haystack; for format tests)."),
) -> None:
    """Generate synthetic conversations with evidence-linked questions, as LoCoMo or LongMemEval JSON."""
    from memopt.core.errors import ConfigError
    from memopt.core.files import check_writable
    from memopt.data.synth import SynthSpec, write_synthetic

    check_writable(out)
    spec = SynthSpec(conversations=conversations, sessions=sessions, seed=seed, hard_percent=hard_percent)
    if fmt == "longmemeval":
        from memopt.data.longmemeval import write_synthetic_longmemeval

        stats = write_synthetic_longmemeval(spec, out)
        typer.echo(f"wrote {out}: {stats['questions']} LongMemEval questions ({stats['abstention']} abstention) "
                   f"{stats['by_question_type']}")
        return
    if fmt != "locomo":
        raise ConfigError(f"--format {fmt!r}: choose locomo or longmemeval.")
    stats = write_synthetic(spec, out)
    typer.echo(f"wrote {out}: {stats['conversations']} conversations, {stats['sessions']} sessions, "
               f"{stats['turns']} turns, {stats['questions']} questions {stats['by_category']}; "
               f"{sum(stats['hard'].values())} that no directive fixes {stats['hard']}")
