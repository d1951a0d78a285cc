"""`memopt mem0 check`: run the real Mem0 (mem0ai 1.0.11) on an exported config fragment, offline, and measure it."""

from __future__ import annotations

from pathlib import Path

import typer

from memopt.cli import options

__all__ = ["app", "check"]

app = typer.Typer(help="Prove exported prompts in the real Mem0 (mem0ai 1.0.11, extra: mem0).", no_args_is_help=True)


@app.command("check")
def check(
    config: Path = typer.Option(..., "--config", "-c", dir_okay=False,
                                help="Mem0 config JSON: what memopt export --format mem0 writes (or a whole config)."),
    data: str = options.DATA,
    limit: int = typer.Option(None, "--limit", "-n", min=1, help="Answer at most N questions (in data order)."),
    conversations: str = typer.Option(None, "--conversations", help="Only these sample ids, comma-separated."),
    top_k: int = typer.Option(None, "--top-k", min=1,
                              help="Memories Memory.search returns per question (default: the config's memopt "
                                   "search.limit, the tuned top_k; else 10)."),
    answer_prompt: Path = typer.Option(None, "--answer-prompt", dir_okay=False,
                                       help="Instructions of memopt's answer op (default: prompts/mem0/answer.md)."),
    server: str = typer.Option(None, "--server",
                               help="A running loopback SimLM server (memopt serve), e.g. http://127.0.0.1:8008/v1; "
                                    "default: start one on a free port."),
    out: Path = typer.Option(None, "--out", "-o", help="Also write the full result as JSON here."),
) -> None:
    """Run real Mem0 with the config's prompts against SimLM; report F1 and what Mem0 stored."""
    from rich.console import Console

    from memopt.cli.tables import mem0_check_table
    from memopt.core.files import check_writable, write_json
    from memopt.data.source import load_data, select
    from memopt.export.mem0_check import check_mem0, load_fragment
    from memopt.lm.redaction import remember_secrets

    if out is not None:
        check_writable(out)
    fragment = load_fragment(config)
    remember_secrets(fragment)  # its keys and passwords are masked wherever they would show
    if top_k is None:
        block = fragment.get("memopt") if isinstance(fragment.get("memopt"), dict) else {}
        top_k = int((block.get("search") or {}).get("limit") or 10)
    instructions = options.answer_prompt_text(answer_prompt)
    name, loaded = load_data(data)
    chosen = select(loaded, options.parse_ids(conversations, "--conversations"))
    progress = Console(stderr=True, soft_wrap=True, highlight=False)
    result = check_mem0(fragment, chosen, limit=limit, top_k=top_k, answer_prompt=instructions, server_url=server,
                        on_progress=lambda message: progress.print(f"[dim]{message}[/]"))
    result["config"], result["data"] = str(config), name
    console = Console(soft_wrap=True, highlight=False)
    console.print(mem0_check_table(result))
    m, memory = result["metrics"], result["memory"]
    console.print(f"real Mem0 {result['mem0_version']} with {config} on {name} (SimLM, simulated): F1 {m['f1']:.3f}, "
                  f"judge {m['judge']:.3f}, {m['n']} questions; {memory['units']} units stored, "
                  f"{memory['updates']} updates, {memory['deletes']} deletes, {memory['units_with_absolute_dates']} "
                  f"units with absolute dates; {result['seconds']:.1f}s", markup=False)
    for note in [result["date_note"], *(f"replaced {key} (the check runs on SimLM and a temporary Qdrant)"
                                        for key in result["replaced_keys"])]:
        if note:
            console.print(f"note: {note}", markup=False)
    if out is not None:
        write_json(out, result, indent=2)
        console.print(f"wrote {out}", markup=False)
