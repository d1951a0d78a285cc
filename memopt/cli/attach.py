"""`memopt attach mem0`: run your own Mem0 (your config) under memopt's tap; write graphs `memopt attribute` reads."""

from __future__ import annotations

from pathlib import Path

import typer

from memopt.cli import options

__all__ = ["app", "mem0"]

app = typer.Typer(help="Diagnose a real memory system in place (Mem0 1.x and 2.x).", no_args_is_help=True)


@app.command("mem0")
def mem0(
    config: Path = typer.Option(..., "--config", "-c", dir_okay=False, help="Your Mem0 config (YAML or JSON)."),
    data: str = options.DATA,
    trace: Path = typer.Option(..., "--trace", "-t", file_okay=False,
                               help="Directory for the recording (records.jsonl) and one graph per conversation."),
    out: Path = typer.Option(Path("results.json"), "--out", "-o",
                             help="Where to write the results (memopt run's format)."),
    answers: Path = typer.Option(None, "--answers", dir_okay=False,
                                 help="Your application's answers: JSONL of {case_id or question, answer}."),
    answer_prompt: Path = typer.Option(None, "--answer-prompt", dir_okay=False,
                                       help="Instructions of memopt's answer op (default: prompts/mem0/answer.md)."),
    offline: bool = typer.Option(False, "--offline",
                                 help="Replace the config's LLM, embedder and stores by SimLM and a temporary local "
                                      "Qdrant (nothing leaves the machine)."),
    yes: bool = typer.Option(False, "--yes", help="Without --offline: confirm that the data set is written into the "
                                                  "stores your config names (its vector store and history database)."),
    lm: str = typer.Option("sim", "--lm", help="LM of memopt's answer op (without --answers)."),
    limit: int = typer.Option(None, "--limit", "-n", min=1, help="Answer at most N questions (in data order)."),
    conversations: str = typer.Option(None, "--conversations", help="Only these sample ids, comma-separated."),
    top_k: int = typer.Option(10, "--top-k", min=1, help="Memories Memory.search returns per question."),
) -> None:
    """Feed the conversations to your Mem0 under the tap, answer, score; write graphs and results."""
    from rich.console import Console

    from memopt.core.errors import ConfigError
    from memopt.core.files import check_writable
    from memopt.data.source import load_data, select
    from memopt.live.attach import attach_mem0, load_answers, load_config
    from memopt.lm.redaction import remember_secrets

    if answers is not None and answer_prompt is not None:
        raise ConfigError("--answers and --answer-prompt exclude each other: the answers are your application's, "
                          "or memopt's answer op makes them.")
    check_writable(out)
    check_writable(trace, option="--trace", directory=True)
    fragment = load_config(config)
    remember_secrets(fragment)  # its keys and passwords are masked wherever they would show
    given = load_answers(answers) if answers is not None else None
    instructions = options.answer_prompt_text(answer_prompt)
    name, loaded = load_data(data)
    chosen = select(loaded, options.parse_ids(conversations, "--conversations"))
    progress = Console(stderr=True, soft_wrap=True, highlight=False)
    result = attach_mem0(fragment, chosen, trace, answers=given, answer_prompt=instructions,
                         lm=options.lm_list([lm]), offline=offline, write_stores=yes,
                         top_k=top_k, limit=limit, data_name=name,
                         on_progress=lambda message: progress.print(f"[dim]{message}[/]"))
    result.save(out)
    m = result.metrics
    Console(soft_wrap=True, highlight=False).print(
        f"{result.lm} on {name}{' (simulated)' if result.simulated else ''}: F1 {m['f1']:.3f}, judge "
        f"{m['judge']:.3f}, {m['n']} questions; graphs and records.jsonl → {trace}/, results → {out}; next: "
        f"memopt attribute --results {out} --trace {trace} (or, without gold: memopt attribute {trace} --cases "
        "FILE)", markup=False)
