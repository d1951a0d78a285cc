"""`memopt run`: run one memory system over a data set, score it, write ``results.json``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from memopt.cli import options

__all__ = ["run"]


def run(
    pipeline: str = typer.Option(..., "--pipeline", "-p", help="long_context, rag, mem0 or evermemos."),
    data: str = options.DATA,
    prompts: Path = options.PROMPTS,
    lm: list[str] = typer.Option(["sim"], "--lm", envvar="MEMOPT_LM",
                                 help="Task LM spec: 'sim' (SimLM, simulated), 'local' (SmolLM2-135M on llama.cpp, "
                                      "needs memopt[local]), 'openai/gpt-4.1-mini', 'MODEL@http://host:port/v1'; "
                                      "repeat it to load-balance several endpoints of one model."),
    judge_lm: str = options.JUDGE_LM,
    limit: int = typer.Option(None, "--limit", "-n", min=1, help="Answer at most N questions (in data order)."),
    conversations: str = typer.Option(None, "--conversations", help="Only these sample ids, comma-separated."),
    concurrency: int = options.CONCURRENCY,
    timeout: float = options.TIMEOUT,
    no_cache: bool = options.NO_CACHE,
    engine: str = options.ENGINE,
    knob: list[str] = typer.Option(None, "--knob", "-k", help="Pipeline knob NAME=INT (repeatable), e.g. top_k=5."),
    seed: int = options.SEED,
    out: Path = typer.Option(Path("results.json"), "--out", "-o", help="Where to write the results."),
    trace: Path = typer.Option(None, "--trace",
                               help="Also record one evolution graph per conversation into this directory."),
) -> None:
    """Run a memory system on a data set and score its answers (F1, exact match, judge accuracy)."""
    from collections import Counter

    from rich.console import Console
    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from memopt.cli.tables import category_table
    from memopt.core.files import check_writable
    from memopt.evaluate.pipeline import run_pipeline
    from memopt.evaluate.run import ERROR_LIMIT

    check_writable(out, reads=[data, *(sorted(trace.glob("*.json")) if trace is not None and trace.is_dir() else [])])
    if trace is not None:
        check_writable(trace, option="--trace", directory=True)
    console = Console(stderr=True)
    progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("F1 {task.fields[f1]:.3f}"), TimeElapsedColumn(), console=console,
                        disable=not console.is_terminal)
    knobs = _knobs(pipeline, options.prompts_dir(prompts), options.parse_knobs(knob), console)
    seen: list[float] = []
    with progress:
        task = progress.add_task(f"{pipeline}", total=None, f1=0.0)

        def on_case(result) -> None:
            seen.append(result.f1)
            progress.update(task, advance=1, f1=sum(seen) / len(seen))

        result = run_pipeline(pipeline, data, prompts=options.prompts_dir(prompts), lm=options.lm_list(lm),
                              judge_lm=options.judge_lm(judge_lm), limit=limit,
                              conversations=options.parse_ids(conversations, "--conversations"),
                              concurrency=concurrency, seed=seed,
                              knobs=knobs, on_case=on_case,
                              on_plan=lambda n: progress.update(task, total=n), trace_dir=trace,
                              cache=not no_cache, engine=engine, **({"timeout": timeout} if timeout else {}))
    result.save(out)
    stdout = Console(soft_wrap=True)
    stdout.print(category_table(result))
    label = " (simulated LM)" if result.simulated else ""
    stdout.print(f"{result.pipeline} on {result.data}{label}: F1 {result.metrics['f1']:.3f}, "
                 f"judge {_fmt(result.metrics.get('judge'))}, {result.metrics['n']} questions, "
                 f"{result.metrics['errored']} errored{_malformed(result.metrics, result.usage)}, "
                 f"{result.seconds:.1f}s, "
                 f"{_calls(result.usage)} → {out}"
                 + (f"; graphs in {trace}/" if trace else ""), highlight=False)
    from memopt.judge.check import disagreement

    suspect = disagreement(result.metrics.get("judge"), result.metrics["f1"], result.metrics["n"])
    if suspect:
        Console(stderr=True, soft_wrap=True).print(f"warning: {suspect}", highlight=False, markup=False)
    if result.error_rate > ERROR_LIMIT:
        errored = result.metrics["errored"]
        (error, count), = Counter(c.error for c in result.cases if c.error).most_common(1)
        Console(stderr=True, soft_wrap=True).print(f"[red]{errored} of {len(result.cases)} cases errored "
                                   f"(more than {ERROR_LIMIT:.0%}); see the 'error' field in {out}. Most common "
                                   f"({count}): {escape(error.splitlines()[0])}[/]", highlight=False)
        sys.exit(1)


def _knobs(pipeline: str, prompts: Path | None, given: dict[str, int], console: Any) -> dict[str, int]:
    """The ``--knob`` values over those of the prompts directory's ``knobs.yaml`` (what `memopt export --format text`
    writes beside tuned prompts: the score was measured with both), saying which were taken from the file."""
    from memopt.core.errors import ConfigError
    from memopt.export.knobs import KNOBS_FILE, load_knobs
    from memopt.systems import system_class

    if prompts is None or not (prompts / pipeline / KNOBS_FILE).is_file():
        return given
    path = prompts / pipeline / KNOBS_FILE
    tuned = load_knobs(prompts, pipeline).values
    try:
        system_class(pipeline).check_knobs(tuned)
    except ConfigError as e:
        raise ConfigError(f"{path}: {e} Fix the file or remove it.") from None
    taken = {k: v for k, v in sorted(tuned.items()) if k not in given}
    if taken:
        console.print(f"knobs from {path}: {' '.join(f'{k}={v}' for k, v in taken.items())} (--knob overrides)",
                      highlight=False, soft_wrap=True)
    return {**tuned, **given}


def _malformed(metrics: dict, usage: dict) -> str:
    replies = usage.get("task", {}).get("replies")
    if not metrics.get("malformed") and not replies:
        return ""
    text = f" ({metrics.get('malformed', 0)} by malformed LM output"
    if replies:
        text += (f"; {replies['outputs']} LM replies: {replies['repaired']} repaired, "
                 f"{replies['malformed']} malformed")
    return text + ")"


def _calls(usage: dict) -> str:
    task, judge = usage.get("task", {}), usage.get("judge", {})
    text = f"{task.get('calls', 0)} task LM calls"
    if task.get("cached") or judge.get("cached"):
        text += f" ({task.get('made', 0)} made, {task.get('cached', 0)} from the cache)"
    if judge.get("calls"):
        text += f", {judge['calls']} judge calls"
    costs = [u.get("cost") for u in (task, judge) if u.get("calls")]
    return text + (f", cost {' + '.join(costs)}" if costs else "")


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"
